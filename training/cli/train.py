"""`radmetrics train RECIPE --config configs/<component>/<stage>/<scale>.yaml [--key value ...]`."""

from __future__ import annotations

import argparse
import sys

HELP = "train a component with a recipe (dataclass arguments + --config YAML + overrides)"
DESCRIPTION = """Train one component/stage. Examples:

  radmetrics train --list
  radmetrics train chexbert/finetune --config configs/chexbert/finetune/tiny.yaml
  radmetrics train chexbert/finetune --config configs/chexbert/finetune/tiny.yaml --num_train_epochs 3

Every option after the recipe name goes to the recipe's own parser; values on the command line
override the YAML. Multi-process runs: accelerate launch --config_file configs/accelerate/<name>.yaml
-m radmetrics.training.<component>.<stage> --config ...
A run resumes from its last complete checkpoint when started again with the same output_dir."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", nargs="?", help="component/stage, e.g. chexbert/finetune (see --list)")
    parser.add_argument("--list", action="store_true", help="list the available recipes and exit")
    parser.add_argument("recipe_args", nargs=argparse.REMAINDER, help="--config YAML and overrides for the recipe")


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require_extra

    from ..config import ConfigError
    from ..recipes import load_recipe, recipe_names

    if args.list or not args.recipe:
        names = recipe_names()
        print("\n".join(names) if names else "no recipes are built yet")
        return 0 if args.list else 2
    require_extra("train", for_what="radmetrics train")
    recipe = load_recipe(args.recipe)
    try:
        run_dir = recipe.main(args.recipe_args)
    except ConfigError as exc:  # a bad config or override: one line, before anything loads
        print(f"radmetrics train: error: {exc}", file=sys.stderr)
        return 2
    print(f"run directory: {run_dir}")
    return 0
