from dataclasses import dataclass, field
from pathlib import Path

import pytest

from radmetrics.training.config import ConfigError, RecipeParser, parse_config_file
from radmetrics.training.recipes import RECIPES, load_recipe, recipe_for_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@dataclass
class ModelArgs:
    model_name_or_path: str
    lr: float = 1e-4


@dataclass
class DataArgs:
    corpus: str = "iu_xray"
    labels: list[str] = field(default_factory=lambda: ["a"])


def test_yaml_then_cli_override(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model_name_or_path: tiny\nlr: 0.5\nlabels: [x, y]\n")
    model, data = RecipeParser((ModelArgs, DataArgs)).parse_recipe_args(["--config", str(cfg), "--lr", "0.25"])
    assert model.model_name_or_path == "tiny" and model.lr == 0.25 and data.labels == ["x", "y"]


def test_unknown_key_is_an_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model_name_or_path: tiny\nlearning_rat: 0.5\n")
    with pytest.raises(ConfigError, match="learning_rat"):
        RecipeParser((ModelArgs, DataArgs)).parse_recipe_args(["--config", str(cfg)])


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        RecipeParser((ModelArgs,)).parse_recipe_args(["--config", str(tmp_path / "nope.yaml")])


def _recipe_configs():
    return [
        p
        for p in sorted(CONFIGS.rglob("*.yaml"))
        if len(p.relative_to(CONFIGS).parts) == 3 and p.parts[-3] != "accelerate"
    ]


def test_every_recipe_config_parses():
    """Every YAML names only known fields and builds valid arguments (bf16 off where no GPU can take it)."""
    import torch

    from radmetrics.training.config import check_keys, read_yaml

    assert _recipe_configs(), "no recipe configs found"
    for path in _recipe_configs():
        recipe = recipe_for_config(path, CONFIGS)
        assert recipe in RECIPES, f"{path}: no recipe {recipe!r} registered"
        types = load_recipe(recipe).ARGUMENT_TYPES
        if torch.cuda.is_available():
            parse_config_file(path, types)
        else:
            check_keys(read_yaml(path), types, str(path))
            RecipeParser(types).parse_recipe_args(["--config", str(path), "--bf16", "false"])


def test_every_llm_endpoint_config_loads():
    from radmetrics.inference.llm.endpoint import Endpoint

    paths = sorted((CONFIGS / "llm").glob("*.yaml"))
    assert {p.stem for p in paths} >= {"openai_gpt4o", "azure_gpt4o", "vllm_local", "hf_local"}
    for path in paths:
        endpoint = Endpoint.from_yaml(path)
        assert endpoint.model and endpoint.name
