"""Held-out results of the tiny encoder recipes (CPU), next to their trivial baselines.

    python benchmarks/encoder_recipes_tiny.py     (writes benchmarks/results/encoder_recipes_tiny.json; ~4 min on 2 cores)

Trains every encoder recipe's tiny config (RaTE-NER IOB and span, CheXbert-style labeler, RadGraph-style
extractor) on silver labels of the bundled IU X-ray corpus (built on the fly) into a temporary directory
and records each run's eval_results.json.
"""

import json
import platform
import tempfile
import time
from pathlib import Path

from radmetrics.training.recipes import load_recipe
from radmetrics.training.run_dir import read_eval_results

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
RECIPES = {"rate_ner/iob": "rate_ner/iob/tiny.yaml", "rate_ner/span": "rate_ner/span/tiny.yaml",
           "chexbert/finetune": "chexbert/finetune/tiny.yaml", "radgraph/train": "radgraph/train/tiny.yaml"}

if __name__ == "__main__":
    results = {"machine": f"{platform.machine()} ({platform.system()}), CPU", "recipes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for recipe, config in RECIPES.items():
            start = time.perf_counter()
            run_dir = load_recipe(recipe).main(["--config", str(CONFIGS / config), "--output_dir", f"{tmp}/{recipe.replace('/', '_')}"])
            results["recipes"][recipe] = {"config": f"configs/{config}", "seconds": round(time.perf_counter() - start, 1),
                                          "eval_results": read_eval_results(run_dir)}
    out = Path(__file__).resolve().parent / "results" / "encoder_recipes_tiny.json"
    out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
