"""One config system for every recipe: dataclass arguments + `--config YAML` + command-line overrides.

Modelled on TRL's `TrlParser`: the YAML supplies defaults, the command line overrides them, and a key
that belongs to none of the recipe's dataclasses is an error (a typo never passes silently).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import yaml
from transformers import HfArgumentParser

from radmetrics.inference.files.output_paths import check_output_dir


class ConfigError(ValueError):
    pass


def read_yaml(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of argument names to values")
    return data


def field_names(dataclass_types) -> set[str]:
    return {f.name for dc in dataclass_types for f in dataclasses.fields(dc) if f.init}


def check_keys(values: dict, dataclass_types, origin: str) -> None:
    unknown = sorted(set(values) - field_names(dataclass_types))
    if unknown:
        names = ", ".join(dc.__name__ for dc in dataclass_types)
        raise ConfigError(f"{origin}: unknown key(s) {unknown} (not a field of {names})")


class RecipeParser(HfArgumentParser):
    """HfArgumentParser that also reads `--config path.yaml` (CLI values win over the YAML)."""

    def parse_recipe_args(self, argv: list[str] | None = None, check_output: bool = True):
        argv = list(sys.argv[1:] if argv is None else argv)
        config_path = None
        if "--config" in argv:
            i = argv.index("--config")
            if i + 1 >= len(argv):
                raise ConfigError("--config needs a path to a YAML file")
            config_path = argv[i + 1]
            argv = argv[:i] + argv[i + 2 :]
        else:
            for i, arg in enumerate(argv):
                if arg.startswith("--config="):
                    config_path = arg.split("=", 1)[1]
                    argv = argv[:i] + argv[i + 1 :]
                    break
        if config_path is not None:
            values = read_yaml(config_path)
            check_keys(values, self.dataclass_types, str(config_path))
            self.set_defaults(**values)
            for action in self._actions:
                if action.dest in values:
                    action.required = False
        parsed = self.parse_args_into_dataclasses(args=argv, look_for_args_file=False)
        from transformers import TrainingArguments

        from .cpu_deepspeed import use_process_group_on_cpu

        for arguments in parsed:
            if isinstance(arguments, TrainingArguments):
                if check_output:
                    # at the door: before data or a model loads (the config test parses every YAML with it off)
                    check_output_dir(arguments.output_dir, what="output_dir")
                use_process_group_on_cpu(arguments)
        return parsed


def parse_config_file(path: str | Path, dataclass_types):
    """Build the dataclasses from a YAML alone (used by the test that checks every config under configs/)."""
    values = read_yaml(path)
    check_keys(values, dataclass_types, str(path))
    return RecipeParser(dataclass_types).parse_recipe_args(["--config", str(path)], check_output=False)


def data_arguments(data_type, config: str | Path, overrides: list[str]):
    """The `data_type` dataclass alone, from a recipe's YAML and command-line overrides (the others' flags ignored),
    without building the others (TrainingArguments would check a GPU config's bf16 and DeepSpeed): what
    `radmetrics rehearse` checks a user's data with before anything launches."""
    values = read_yaml(config)
    own = field_names([data_type])
    parser = HfArgumentParser(data_type)
    parser.set_defaults(**{k: v for k, v in values.items() if k in own})
    for action in parser._actions:
        if action.dest in values:
            action.required = False
    parsed, _ = parser.parse_args_into_dataclasses(
        args=overrides, look_for_args_file=False, return_remaining_strings=True
    )
    return parsed
