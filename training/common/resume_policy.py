"""One policy for a recipe run whose output_dir already holds a run: the same run resumes (and says from where, and
which settings changed since it started); another run (another component, recipe, base model or data) is refused in
one line before any model loads, so that checkpoints of two different runs never mix."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import ConfigError
from .run_dir import RUN_MANIFEST

IDENTITY = ("component", "recipe", "base_model")


class RunMismatchError(ConfigError):
    """output_dir holds a run that is not this one."""


def _plain(value):
    """A value as the run manifest stores it (JSON), so that a tuple and a list, or a Path and a str, compare equal."""
    return json.loads(json.dumps(value, default=str))


def previous_run(run_dir: Path) -> dict | None:
    path = Path(run_dir) / RUN_MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunMismatchError(
            f"output_dir {run_dir}: unreadable {RUN_MANIFEST} ({exc}): use a new output_dir"
        ) from None


def check_same_run(run_dir: Path, identity: dict, data_config: dict, config: dict) -> list[str]:
    """Refuse `run_dir` when it holds another run: a different component, recipe or base model (`identity`), or
    different data arguments (`data_config`). Returns the other settings that changed since the run started
    ("max_steps: 20 -> 90"), for the log: a longer schedule or a new learning rate resumes as the user asked."""
    old = previous_run(run_dir)
    if old is None:
        return []
    old_config = old.get("training_config", {})
    mismatched = [
        f"{key} {old.get(key)!r} -> {_plain(value)!r}"
        for key, value in identity.items()
        if old.get(key) != _plain(value)
    ]
    mismatched += [
        f"{key} {old_config.get(key)!r} -> {_plain(value)!r}"
        for key, value in data_config.items()
        if key in old_config and old_config[key] != _plain(value)
    ]
    if mismatched:
        raise RunMismatchError(
            f"output_dir {run_dir} holds another run ({'; '.join(mismatched)}): give a new output_dir, or delete "
            "this one to start over"
        )
    return _changed_settings(old_config, _plain(config))


def _changed_settings(old: dict, new: dict, prefix: str = "") -> list[str]:
    changed = []
    for key in sorted(set(old) | set(new)):
        if key in ("output_dir", "logging_dir", "run_name"):
            continue
        before, after = old.get(key), new.get(key)
        if isinstance(before, dict) and isinstance(after, dict):
            changed += _changed_settings(before, after, f"{prefix}{key}.")
        elif before != after:
            changed.append(f"{prefix}{key}: {before!r} -> {after!r}")
    return changed
