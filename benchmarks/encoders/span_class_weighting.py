"""Choose the span recipes' class weighting on validation (issue: every class learned): the small RaTE-NER span and
RadGraph configs trained with each setting of SETTINGS (`--class_weight_power` 0 is PURE's unweighted loss; RadGraph
also tries a lighter weight on its relation loss), scored end to end on the validation split, per class.

    python benchmarks/encoders/span_class_weighting.py [--only SETTING ...]    (writes \\
        benchmarks/results/span_class_weighting.json)

`--only` runs some settings and merges them into the results file.

The recipes score their final model on the silver `test` split. Here they are given a copy of the silver data whose
`test` split is the validation split, so the choice reads validation only and the test split stays untouched until
benchmarks/encoders/encoder_recipes_small.py. Every run keeps the epoch with the best validation macro F1 (the configs'
setting).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from encoder_recipes_tiny import build_silver, train

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import RESULTS, machine, write_results  # noqa: E402

RECIPES = {
    "rate_ner/span": ("rate_ner", ("test_",)),
    "radgraph/train": ("radgraph", ("test_entity_", "test_relation_")),
}
# RadGraph settings measured when the small config trained on 1,000 reports (before the relation offsets existed, for
# the first five)
EARLIER = ("--max_train_samples", "1000")
NO_OFFSETS = ("--tune_relation_offsets", "false")
# recipe -> setting name -> its arguments
SETTINGS = {
    "rate_ner/span": {f"power {p}": ("--class_weight_power", p) for p in ("0", "0.5", "1")},
    "radgraph/train": {
        **{f"power {p}": ("--class_weight_power", p, *NO_OFFSETS, *EARLIER) for p in ("0", "0.5", "1")},
        **{
            f"power 0.5, relations {p}": (
                "--class_weight_power",
                "0.5",
                "--relation_class_weight_power",
                p,
                *NO_OFFSETS,
                *EARLIER,
            )
            for p in ("0", "0.25")
        },
        # the shipped weighting with its relation offsets, on 1,000 reports and on every training report
        # (the small config's setting): does more data teach suggestive_of?
        "power 0.5, relations 0.25, offsets": (
            "--class_weight_power",
            "0.5",
            "--relation_class_weight_power",
            "0.25",
            *EARLIER,
        ),
        "power 0.5, relations 0.25, offsets, every training report": (
            "--class_weight_power",
            "0.5",
            "--relation_class_weight_power",
            "0.25",
            "--max_train_samples",
            "0",
        ),
    },
}


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
    classes = [key[len(f"{prefix}support_") :] for key in results if key.startswith(f"{prefix}support_")]
    return {
        "f1": results[f"{prefix}f1"],
        "macro_f1": results[f"{prefix}macro_f1"],
        "never_predicted": results[f"{prefix}never_predicted"],
        "classes": {
            c: {
                "f1": results[f"{prefix}f1_{c}"],
                "support": results[f"{prefix}support_{c}"],
                "predicted": results[f"{prefix}predicted_{c}"],
            }
            for c in classes
        },
    }


def markdown(results: dict) -> str:
    """One row per recipe, setting and scored output: micro and macro F1, each class's F1, the classes never
    predicted."""
    lines = [
        "| recipe | setting | output | micro F1 | macro F1 | F1 per class | never predicted |",
        "|---|---|---|---|---|---|---|",
    ]
    for recipe, settings in results["recipes"].items():
        for name, run in settings.items():
            for output, scores in run.items():
                if isinstance(scores, dict) and "classes" in scores:
                    classes = ", ".join(f"{c} {v['f1']:.2f}" for c, v in scores["classes"].items())
                    lines.append(
                        f"| `{recipe}` | {name} | {'relations' if output.endswith('relation') else 'entities'} |"
                        f" {scores['f1']:.3f} | {scores['macro_f1']:.3f} | {classes} |"
                        f" {', '.join(scores['never_predicted']) or '-'} |"
                    )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", help="setting names (default: all)")
    only = parser.parse_args().only
    start = time.perf_counter()
    out = RESULTS / "span_class_weighting.json"
    results = json.loads(out.read_text()) if only and out.exists() else {"recipes": {}}
    results.update(
        {"machine": machine(), "command": "python benchmarks/encoders/span_class_weighting.py", "split": "validation"}
    )
    with tempfile.TemporaryDirectory() as tmp:
        labelers = [labeler for labeler, _ in RECIPES.values()]
        silver = validation_as_test(build_silver(Path(tmp) / "silver", labelers), Path(tmp) / "validation", labelers)
        for recipe, (_, prefixes) in RECIPES.items():
            for n, (name, arguments) in enumerate(SETTINGS[recipe].items()):
                if only and name not in only:
                    continue
                _, record = train(
                    recipe, f"{recipe}/small.yaml", Path(tmp) / f"{recipe.replace('/', '_')}_{n}", silver, arguments
                )
                scores = {prefix.strip("_"): per_class(record["eval_results"], prefix) for prefix in prefixes}
                results["recipes"].setdefault(recipe, {})[name] = {
                    "arguments": list(arguments),
                    "seconds": record["seconds"],
                    **scores,
                }
                print(
                    recipe,
                    name,
                    {k: (round(v["f1"], 3), round(v["macro_f1"], 3), v["never_predicted"]) for k, v in scores.items()},
                    flush=True,
                )
                write_results(out.name, results)
    print(f"wrote {out} ({time.perf_counter() - start:.0f} s)")
    print(markdown(results))
