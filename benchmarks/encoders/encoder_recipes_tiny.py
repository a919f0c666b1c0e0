"""Held-out results of the tiny encoder recipes (CPU), next to their trivial baselines.

    python benchmarks/encoders/encoder_recipes_tiny.py     (writes benchmarks/results/encoder_recipes_tiny.json)

Trains every encoder recipe's tiny config (RaTE-NER IOB and span, CheXbert-style labeler, RadGraph-style
extractor) on one build of the silver labels of the bundled IU X-ray corpus (leak-free text split) in a
temporary directory and records each run's eval_results.json. `encoder_recipes_small.py` reuses the helpers
below to train tiny and small configs on the same silver build and compare them with intervals.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from radmetrics.training.common.run_dir import read_eval_results
from radmetrics.training.recipes import load_recipe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import CONFIGS, machine, write_results  # noqa: E402

RECIPES = {
    "rate_ner/iob": "rate_ner/iob/tiny.yaml",
    "rate_ner/span": "rate_ner/span/tiny.yaml",
    "chexbert/finetune": "chexbert/finetune/tiny.yaml",
    "radgraph/train": "radgraph/train/tiny.yaml",
}


def build_silver(out: Path, labelers: list[str]) -> Path:
    """Silver labels of the bundled IU X-ray corpus, as `radmetrics data silver` builds them (default text split)."""
    from radmetrics.inference.cli import main

    if main(["data", "silver", "--out", str(out), "--labelers", *labelers]) != 0:
        raise RuntimeError(f"building the silver labels into {out} failed")
    return out


def train(
    recipe: str, config: str, output_dir: Path, silver_dir: Path, extra: tuple[str, ...] = ()
) -> tuple[Path, dict]:
    """Train `recipe` with configs/`config` (and `extra` arguments) on `silver_dir`: its run directory and a record of
    the run (config, arguments, wall-clock seconds, eval results)."""
    start = time.perf_counter()
    run_dir = load_recipe(recipe).main(
        ["--config", str(CONFIGS / config), "--output_dir", str(output_dir), "--silver_dir", str(silver_dir), *extra]
    )
    return run_dir, {
        "config": f"configs/{config}",
        **({"arguments": list(extra)} if extra else {}),
        "seconds": round(time.perf_counter() - start, 1),
        "eval_results": read_eval_results(run_dir),
    }


if __name__ == "__main__":
    start = time.perf_counter()
    results = {"machine": machine(), "command": "python benchmarks/encoders/encoder_recipes_tiny.py", "recipes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        silver = build_silver(Path(tmp) / "silver", ["chexpert", "rate_ner", "radgraph"])
        for recipe, config in RECIPES.items():
            _, results["recipes"][recipe] = train(recipe, config, Path(tmp) / recipe.replace("/", "_"), silver)
    results["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(results, indent=2))
    print(f"wrote {write_results('encoder_recipes_tiny.json', results)}")
