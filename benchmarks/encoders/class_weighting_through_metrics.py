"""Class weighting through to the metric: RaTEScore and RadGraph F1 on the demo's scoring pairs, scored with the small
span exports trained without and with the class-weighted losses (and, for RadGraph, the relation offsets chosen on
validation).

    python benchmarks/encoders/class_weighting_through_metrics.py    (writes \\
        benchmarks/results/class_weighting_through_metrics.json)

1. Silver labels of the bundled IU X-ray corpus (leak-free text split), as encoder_recipes_small.py builds them.
2. Four runs, each exported: `rate_ner/span` and `radgraph/train` with their small configs ("weighted", what the
   configs ship) and with PURE's unweighted loss and no offsets ("unweighted": `--class_weight_power 0
   --relation_class_weight_power 0 --tune_relation_offsets false`, everything else as in the configs).
3. The demo's scoring pairs (`training/demo.py` `demo_pairs`: 50 IU test reports, each against another of them), scored
   by RaTEScore (the span tagger, the bundled MiniLM entity encoder) and RadGraph F1 with each pair of exports: the
   corpus values, the paired difference weighted - unweighted with its 95% bootstrap interval and approximate-
   randomisation p, how many pairs moved, and, as the why, how many entities and relations of each class each export
   found in the 100 reports, with the pairs that moved most.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from encoder_recipes_tiny import build_silver, train

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import RESULTS, machine  # noqa: E402

from radmetrics.inference.scoring.scorer import Scorer
from radmetrics.inference.scoring.stats import paired_means

PAIRS = 50
UNWEIGHTED = ("--class_weight_power", "0", "--relation_class_weight_power", "0", "--tune_relation_offsets", "false")
RUNS = {
    "rate_ner/span": ("rate_ner_span", "ratescore", ("ratescore",)),
    "radgraph/train": ("radgraph", "radgraph", ("radgraph_simple", "radgraph_partial", "radgraph_complete")),
}
MOVED = 1e-9
EXAMPLES = 3


def found_classes(metric: str, details: list[dict]) -> dict[str, int]:
    """Entities (and relations) of each class that an export found in the references and candidates of `details`."""
    counts: Counter = Counter()
    for pair in details:
        if metric == "ratescore":
            for side in ("reference_entities", "candidate_entities"):
                counts.update(label for _, label in pair[side])
        else:
            for side in ("reference_annotation", "candidate_annotation"):
                for entity in pair[side]["entities"].values():
                    counts[entity["label"]] += 1
                    counts.update(relation for relation, _ in entity["relations"])
    return dict(sorted(counts.items()))


def compare(metric: str, keys: tuple[str, ...], results: dict, references: list[str], candidates: list[str]) -> dict:
    weighted, unweighted = results["weighted"], results["unweighted"]
    scores = {}
    for key in keys:
        a = [row[key] for row in weighted.per_sample]
        b = [row[key] for row in unweighted.per_sample]
        paired = paired_means(a, b)
        moved = sorted(range(len(a)), key=lambda i: -abs(a[i] - b[i]))
        scores[key] = {
            "weighted": weighted.summary[key]["value"],
            "unweighted": unweighted.summary[key]["value"],
            "weighted_minus_unweighted": paired,
            "pairs_moved": sum(abs(x - y) > MOVED for x, y in zip(a, b)),
            "moved_most": [
                {
                    "pair": i,
                    "weighted": a[i],
                    "unweighted": b[i],
                    "reference": references[i],
                    "candidate": candidates[i],
                }
                for i in moved[:EXAMPLES]
            ],
        }
    return {
        "scores": scores,
        "found": {side: found_classes(metric, results[side].details[metric]) for side in results},
    }


def main() -> dict:
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.training.demo import demo_pairs
    from radmetrics.training.export import export_run

    start = time.perf_counter()
    references, candidates = demo_pairs(iu_xray_corpus(), PAIRS)
    results = {
        "machine": machine(),
        "command": "python benchmarks/encoders/class_weighting_through_metrics.py",
        "pairs": len(references),
        "unweighted_arguments": list(UNWEIGHTED),
        "metrics": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        silver = build_silver(Path(tmp) / "silver", ["rate_ner", "radgraph"])
        for recipe, (component, metric, keys) in RUNS.items():
            scored, runs = {}, {}
            for side, extra in (("weighted", ()), ("unweighted", UNWEIGHTED)):
                name = f"{recipe.replace('/', '_')}_{side}"
                run_dir, runs[side] = train(recipe, f"{recipe}/small.yaml", Path(tmp) / name, silver, extra)
                exported = export_run(run_dir, Path(tmp) / "exports" / name)
                scored[side] = Scorer([metric], {component: str(exported)}, n_bootstrap=1000)(references, candidates)
            results["metrics"][metric] = {
                "recipe": recipe,
                "runs": {
                    side: (
                        {k: v for k, v in run.items() if k != "eval_results"}
                        | {"test_macro_f1": macro_f1s(run["eval_results"])}
                    )
                    for side, run in runs.items()
                },
                **compare(metric, keys, scored, references, candidates),
            }
    results["seconds"] = round(time.perf_counter() - start, 1)
    return results


def macro_f1s(eval_results: dict) -> dict:
    return {k: v for k, v in eval_results.items() if k.endswith("macro_f1") or k == "relation_decision_offsets"}


def markdown(results: dict) -> str:
    lines = [
        "| metric key | unweighted exports | weighted exports | weighted - unweighted [95% CI] (p) | pairs moved |",
        "|---|---|---|---|---|",
    ]
    for entry in results["metrics"].values():
        for key, s in entry["scores"].items():
            d = s["weighted_minus_unweighted"]
            lines.append(
                f"| {key} | {s['unweighted']:.4f} | {s['weighted']:.4f} | {d['difference']:+.4f} [{d['ci95'][0]:+.4f},"
                f" {d['ci95'][1]:+.4f}] ({d['p_value']:.3f}) | {s['pairs_moved']} of {results['pairs']} |"
            )
    lines += ["", "| metric | export | classes found in the 100 reports |", "|---|---|---|"]
    for metric, entry in results["metrics"].items():
        for side, found in entry["found"].items():
            lines.append(f"| {metric} | {side} | {', '.join(f'{k} {v}' for k, v in found.items())} |")
    return "\n".join(lines)


if __name__ == "__main__":
    out = main()
    path = RESULTS / "class_weighting_through_metrics.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    print(markdown(out))
