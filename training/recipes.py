"""Registry of training recipes: `component/stage` -> module.

A recipe module defines `ARGUMENT_TYPES` (its dataclasses, parsed by `RecipeParser`) and
`main(argv) -> Path` (the run directory). Its YAML configs live in configs/<component>/<stage>/<scale>.yaml.
"""

from __future__ import annotations

import importlib
from pathlib import Path

RECIPES: dict[str, str] = {
    "rate_ner/iob": "radmetrics.training.rate_ner.iob",
    "rate_ner/span": "radmetrics.training.rate_ner.span",
    "radgraph/train": "radmetrics.training.radgraph.train",
    "chexbert/finetune": "radmetrics.training.chexbert.finetune",
    "chexbert/gold": "radmetrics.training.chexbert.gold",
    "findings/classifier": "radmetrics.training.findings.classifier",
    "judge/pairs": "radmetrics.training.judge.pairs",
    "green/pretrain": "radmetrics.training.green.pretrain",
    "green/sft": "radmetrics.training.green.sft",
    "crimson/sft": "radmetrics.training.crimson.sft",
}


def recipe_names() -> list[str]:
    return sorted(RECIPES)


def load_recipe(name: str):
    try:
        return importlib.import_module(RECIPES[name])
    except KeyError:
        known = ", ".join(recipe_names()) or "none yet"
        raise ValueError(f"unknown recipe {name!r}; known recipes: {known}") from None


def recipe_for_config(path: str | Path, configs_root: str | Path) -> str:
    """configs/<component>/<stage>/<scale>.yaml -> 'component/stage'."""
    rel = Path(path).resolve().relative_to(Path(configs_root).resolve())
    if len(rel.parts) != 3:
        raise ValueError(f"{path}: recipe configs live at configs/<component>/<stage>/<scale>.yaml")
    return f"{rel.parts[0]}/{rel.parts[1]}"
