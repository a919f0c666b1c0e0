"""Choose the span recipes' class weighting on validation (issue: every class learned): the small RaTE-NER span and
RadGraph configs trained with `--class_weight_power` 0 (PURE's unweighted loss), 0.5 and 1, scored end to end on the
validation split, per class.

    python benchmarks/span_class_weighting.py    (writes benchmarks/results/span_class_weighting.json)

The recipes score their final model on the silver `test` split. Here they are given a copy of the silver data whose
`test` split is the validation split, so the choice reads validation only and the test split stays untouched until
benchmarks/encoder_recipes_small.py. Every run keeps the epoch with the best validation macro F1 (the configs'
setting).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from encoder_recipes_tiny import build_silver, machine, train, write_results

POWERS = (0.0, 0.5, 1.0)
RECIPES = {"rate_ner/span": ("rate_ner", ("test_",)), "radgraph/train": ("radgraph", ("test_entity_", "test_relation_"))}


def validation_as_test(silver: Path, out: Path, labelers: list[str]) -> Path:
    """A copy of the silver data whose test split is its validation split."""
    from datasets import load_from_disk

    for labeler in labelers:
        data = load_from_disk(str(silver / labeler / "hf"))
        data["test"] = data["validation"]
        data.save_to_disk(str(out / labeler / "hf"))
    return out


def per_class(results: dict, prefix: str) -> dict:
    """Micro and macro F1, each class's F1 / support / predicted count and the classes never predicted."""
    classes = [key[len(f"{prefix}support_"):] for key in results if key.startswith(f"{prefix}support_")]
    return {"f1": results[f"{prefix}f1"], "macro_f1": results[f"{prefix}macro_f1"],
            "never_predicted": results[f"{prefix}never_predicted"],
            "classes": {c: {"f1": results[f"{prefix}f1_{c}"], "support": results[f"{prefix}support_{c}"],
                            "predicted": results[f"{prefix}predicted_{c}"]} for c in classes}}


if __name__ == "__main__":
    start = time.perf_counter()
    powers = [float(p) for p in sys.argv[1:]] or list(POWERS)
    results = {"machine": machine(), "command": "python benchmarks/span_class_weighting.py", "split": "validation",
               "recipes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        labelers = [labeler for labeler, _ in RECIPES.values()]
        silver = validation_as_test(build_silver(Path(tmp) / "silver", labelers), Path(tmp) / "validation", labelers)
        for recipe, (_, prefixes) in RECIPES.items():
            for power in powers:
                _, record = train(recipe, f"{recipe}/small.yaml", Path(tmp) / f"{recipe.replace('/', '_')}_{power}", silver,
                                  ("--class_weight_power", str(power)))
                scores = {prefix.strip("_"): per_class(record["eval_results"], prefix) for prefix in prefixes}
                results["recipes"].setdefault(recipe, {})[str(power)] = {"seconds": record["seconds"], **scores}
                print(recipe, power, {k: (round(v["f1"], 3), round(v["macro_f1"], 3), v["never_predicted"])
                                      for k, v in scores.items()}, flush=True)
                write_results("span_class_weighting.json", {**results, "seconds": round(time.perf_counter() - start, 1)})
    print(f"wrote {write_results('span_class_weighting.json', {**results, 'seconds': round(time.perf_counter() - start, 1)})}")
