"""Tiny (random 2-layer BERT) vs small (the bundled pretrained all-MiniLM-L6-v2) for RaTE-NER IOB, RaTE-NER span
and the RadGraph-style extractor, with 95% bootstrap intervals and paired comparisons.

    python benchmarks/encoders/encoder_recipes_small.py    (writes benchmarks/results/encoder_recipes_small.json)
    python benchmarks/encoders/encoder_recipes_small.py --only radgraph/train    (reruns one recipe, keeps the \\
        others' entries)

Every run trains its config (seed 0) on one build of the silver labels of the bundled IU X-ray corpus (the
leak-free text split), touches the test split once (the recipe's final evaluation) and writes its per-sentence
test predictions and the word-majority baseline's (RUN_DIR/test_predictions.jsonl). From those files:

- the main held-out score (micro F1: seqeval's entity F1 for IOB, exact-span F1 for the span models, entity and
  relation F1 for RadGraph) with a 95% percentile bootstrap interval (1,000 resamples of the test reports: the
  sentences of one report move together, as they are not independent);
- `inference.scoring.stats.paired_comparison` of small vs tiny and of each model vs the word-majority baseline: the
  difference with its paired-bootstrap 95% interval and the approximate-randomisation p-value (10,000 swaps);
- per-class precision, recall and F1 (with its interval) and gold support.

Each score recomputed from the predictions must equal the recipe's eval_results.json, or the script stops.
CheXbert is left out here (`encoder_recipes_tiny.py` still runs its tiny config).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from encoder_recipes_tiny import build_silver, train

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import RESULTS, machine, write_results  # noqa: E402

from radmetrics.inference.loading.components import get_component
from radmetrics.inference.scoring.stats import bootstrap_ci, paired_comparison, precision_recall_f1
from radmetrics.training.common.lifecycle import TEST_PREDICTIONS

SCALES = ("tiny", "small")
RESAMPLES, PERMUTATIONS, SEED = 1000, 10000, 0
MIN_SUPPORT, MIN_F1 = 19, 0.5  # the per-class target: every class with this much test support reaches this F1
BASELINE = "baseline_word_majority"
RESULTS_NAME = "encoder_recipes_small.json"


def as_tuples(items: list[list]) -> set[tuple]:
    return {tuple(item) for item in items}


@dataclass(frozen=True)
class Task:
    """One scored output of a recipe: where its gold, predictions and baseline sit in a predictions record, how to
    read them as sets of tuples ending in the class, its classes and its keys in eval_results.json."""

    name: str
    gold: str
    predicted: str
    baseline: str | None
    read: Callable[[list], set[tuple]]
    classes: tuple[str, ...]
    result_key: str
    baseline_key: str | None


def rate_types() -> tuple[str, ...]:
    return tuple(get_component("rate_ner_span").label_map["labels"][1:])


def radgraph_labels(kind: str) -> tuple[str, ...]:
    return tuple(get_component("radgraph").label_map[kind][1:])


RATE_NER_ENTITIES = Task(
    "entities", "gold", "predicted", BASELINE, as_tuples, rate_types(), "test_f1", "baseline_word_majority_test_f1"
)
TASKS = {
    "rate_ner/iob": [RATE_NER_ENTITIES],
    "rate_ner/span": [RATE_NER_ENTITIES],
    "radgraph/train": [
        Task(
            "entities",
            "gold_entities",
            "predicted_entities",
            f"{BASELINE}_entities",
            as_tuples,
            radgraph_labels("entities"),
            "test_entity_f1",
            "baseline_word_majority_test_entity_f1",
        ),
        Task(
            "relations",
            "gold_relations",
            "predicted_relations",
            None,
            as_tuples,
            radgraph_labels("relations"),
            "test_relation_f1",
            None,
        ),
    ],
}


def read_predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / TEST_PREDICTIONS).read_text(encoding="utf-8").splitlines()]


def count_table(records: list[dict], task: Task, field: str, reports: list[str]) -> np.ndarray:
    """(reports, classes, 3): true positives, predicted and gold counts of each class, summed over each report's
    sentences; sums over any set of reports give that set's micro and per-class scores."""
    table = np.zeros((len(reports), len(task.classes), 3), dtype=np.int64)
    row_of, column_of = {r: i for i, r in enumerate(reports)}, {c: j for j, c in enumerate(task.classes)}
    for record in records:
        gold, predicted = task.read(record[task.gold]), task.read(record[field])
        row = table[row_of[record["report_id"]]]
        for items, slot in ((gold & predicted, 0), (predicted, 1), (gold, 2)):
            for item in items:
                row[column_of[item[-1]], slot] += 1
    return table


def micro_f1(table: np.ndarray) -> float:
    return precision_recall_f1(*table.sum(axis=(0, 1)))[2]


def class_f1(column: int) -> Callable[[np.ndarray], float]:
    return lambda table: precision_recall_f1(*table[:, column].sum(axis=0))[2]


def macro_f1(supported: np.ndarray) -> Callable[[np.ndarray], float]:
    """Mean F1 over the classes with test support (span_scores' macro F1), for any resample of the reports."""
    return lambda table: float(
        np.mean([precision_recall_f1(*table[:, j].sum(axis=0))[2] for j in np.flatnonzero(supported)])
    )


def summary(table: np.ndarray, classes: tuple[str, ...]) -> dict:
    """Micro P/R/F1 and macro F1 with their intervals, and each class's P/R/F1 (F1 interval), support and predicted
    count; the classes with support and no prediction."""

    def interval(statistic):
        return [round(v, 4) for v in bootstrap_ci(lambda idx: statistic(table[idx]), len(table), RESAMPLES, SEED)]

    precision, recall, f1 = precision_recall_f1(*table.sum(axis=(0, 1)))
    supported = table[:, :, 2].sum(axis=0) > 0
    per_class = {}
    for j, name in enumerate(classes):
        p, r, f = precision_recall_f1(*table[:, j].sum(axis=0))
        per_class[name] = {
            "precision": p,
            "recall": r,
            "f1": f,
            "f1_ci95": interval(class_f1(j)),
            "support": int(table[:, j, 2].sum()),
            "predicted": int(table[:, j, 1].sum()),
        }
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "f1_ci95": interval(micro_f1),
        "macro_f1": macro_f1(supported)(table),
        "macro_f1_ci95": interval(macro_f1(supported)),
        "never_predicted": [c for c, row in per_class.items() if row["support"] and not row["predicted"]],
        "per_class": per_class,
    }


def paired(a: np.ndarray, b: np.ndarray) -> dict:
    """Micro F1 of a minus that of b on the same test reports (inference.scoring.stats.paired_comparison)."""
    both = np.concatenate([a, b])
    result = paired_comparison(lambda idx: micro_f1(both[idx]), len(a), RESAMPLES, PERMUTATIONS, SEED)
    return {**result, "ci95": [round(v, 4) for v in result["ci95"]]}


def check(value: float, expected: float, what: str) -> None:
    if abs(value - expected) > 1e-9:
        raise AssertionError(f"{what}: {value} recomputed from the predictions, {expected} in eval_results.json")


def compare(recipe: str, runs: dict[str, Path], run_records: dict[str, dict]) -> dict:
    """Every task of `recipe`: each scale's and the baseline's summary and the paired comparisons."""
    predictions = {scale: read_predictions(run_dir) for scale, run_dir in runs.items()}
    ids = [[r["id"] for r in records] for records in predictions.values()]
    if any(i != ids[0] for i in ids):
        raise AssertionError(f"{recipe}: the runs predicted different test sentences")
    reports = list(dict.fromkeys(r["report_id"] for r in predictions[SCALES[0]]))
    scores = {}
    for task in TASKS[recipe]:
        tables = {scale: count_table(predictions[scale], task, task.predicted, reports) for scale in runs}
        task_scores = {scale: summary(table, task.classes) for scale, table in tables.items()}
        for scale, table in tables.items():
            recorded = run_records[scale]["eval_results"]
            check(micro_f1(table), recorded[task.result_key], f"{recipe} {scale} {task.name}")
            check(
                task_scores[scale]["macro_f1"],
                recorded[task.result_key.replace("_f1", "_macro_f1")],
                f"{recipe} {scale} {task.name} macro",
            )
        task_scores["small_confusion"] = confusion(predictions["small"], task, task.predicted)
        comparisons = {"small_vs_tiny": paired(tables["small"], tables["tiny"])}
        if task.baseline:
            baseline = count_table(predictions[SCALES[0]], task, task.baseline, reports)
            check(micro_f1(baseline), run_records[SCALES[0]]["eval_results"][task.baseline_key], f"{recipe} baseline")
            task_scores[BASELINE] = summary(baseline, task.classes)
            comparisons.update({f"{scale}_vs_{BASELINE}": paired(tables[scale], baseline) for scale in runs})
        scores[task.name] = {**task_scores, "paired": comparisons}
    return {"test_reports": len(reports), "test_sentences": len(predictions[SCALES[0]]), "scores": scores}


def with_interval(value: float, interval: list[float], signed: bool = False) -> str:
    number = "{:+.3f}" if signed else "{:.3f}"
    return f"{number.format(value)} [{number.format(interval[0])}, {number.format(interval[1])}]"


def confusion(records: list[dict], task: Task, field: str) -> dict[str, dict[str, int]]:
    """For each gold class: what the model predicted on exactly the same span (or pair of spans), "none" where it
    predicted nothing there."""
    table: dict[str, Counter] = {c: Counter() for c in task.classes}
    for record in records:
        predicted = {item[:-1]: item[-1] for item in task.read(record[field])}
        for item in task.read(record[task.gold]):
            table[item[-1]][predicted.get(item[:-1], "none")] += 1
    return {c: dict(counts.most_common()) for c, counts in table.items()}


def markdown(results: dict) -> str:
    """The README table: micro and macro F1 [95% CI] of tiny, small and the baseline, small - tiny, seconds."""
    lines = [
        "| recipe | score | tiny | small | small - tiny (p) | word-majority | tiny s | small s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for recipe, entry in results["recipes"].items():
        for task, s in entry["scores"].items():
            d = s["paired"]["small_vs_tiny"]
            for average, key in (("micro", "f1"), ("macro", "macro_f1")):
                baseline = with_interval(s[BASELINE][key], s[BASELINE][f"{key}_ci95"]) if BASELINE in s else "n/a"
                difference = (
                    f"{with_interval(d['difference'], d['ci95'], signed=True)} ({d['p_value']:.4f})"
                    if key == "f1"
                    else ""
                )
                lines.append(
                    f"| `{recipe}` | {task} {average} F1 | {with_interval(s['tiny'][key], s['tiny'][f'{key}_ci95'])} |"
                    f" {with_interval(s['small'][key], s['small'][f'{key}_ci95'])} | {difference} | {baseline} |"
                    f" {entry['runs']['tiny']['seconds']:.0f} | {entry['runs']['small']['seconds']:.0f} |"
                )
    return "\n".join(lines)


def class_markdown(results: dict) -> str:
    """The README's per-class table of the small runs, with the target (support >= MIN_SUPPORT: F1 >= MIN_F1 and
    at least the word-majority baseline's F1) and what the model predicted on the gold spans of each class."""
    lines = [
        (
            "| recipe | class | support | predicted | small F1 [95% CI] | word-majority F1 | target | small's answer"
            " on the gold spans |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for recipe, entry in results["recipes"].items():
        for task, s in entry["scores"].items():
            for name, row in s["small"]["per_class"].items():
                baseline = s[BASELINE]["per_class"][name]["f1"] if BASELINE in s else None
                met = row["f1"] >= MIN_F1 and (baseline is None or row["f1"] >= baseline)
                target = (
                    f"n/a (support < {MIN_SUPPORT})"
                    if row["support"] < MIN_SUPPORT
                    else ("met" if met else "**missed**")
                )
                answers = ", ".join(f"{label} {count}" for label, count in s["small_confusion"][name].items())
                lines.append(
                    f"| `{recipe}` {task} | {name} | {row['support']} | {row['predicted']} |"
                    f" {with_interval(row['f1'], row['f1_ci95'])} | {'n/a' if baseline is None else f'{baseline:.3f}'}"
                    f" | {target} | {answers} |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(TASKS),
        help="rerun these recipes; the others' entries are kept from the results file as they were recorded",
    )
    args = parser.parse_args()
    recorded = RESULTS / RESULTS_NAME
    previous = json.loads(recorded.read_text()) if args.only and recorded.is_file() else {"recipes": {}}
    results = {
        "machine": machine(),
        "command": "python benchmarks/encoders/encoder_recipes_small.py",
        "bootstrap": {
            "unit": "test report",
            "resamples": RESAMPLES,
            "permutations": PERMUTATIONS,
            "seed": SEED,
            "level": 0.95,
        },
        "recipes": {
            recipe: {
                "command": previous.get("command"),
                "machine": previous.get("machine"),
                **previous["recipes"][recipe],
            }
            for recipe in TASKS
            if recipe in previous["recipes"]
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        silver = build_silver(Path(tmp) / "silver", ["rate_ner", "radgraph"])
        for recipe in args.only or TASKS:
            start = time.perf_counter()
            runs, records = {}, {}
            for scale in SCALES:
                config = f"{recipe}/{scale}.yaml"
                runs[scale], records[scale] = train(
                    recipe, config, Path(tmp) / f"{recipe.replace('/', '_')}_{scale}", silver
                )
            results["recipes"][recipe] = {
                "command": " ".join(
                    ["python benchmarks/encoders/encoder_recipes_small.py", *(["--only", recipe] if args.only else [])]
                ),
                "machine": results["machine"],
                "runs": records,
                **compare(recipe, runs, records),
                "seconds": round(time.perf_counter() - start, 1),
            }
    print(f"wrote {write_results(RESULTS_NAME, results)}")
    print(markdown(results), class_markdown(results), sep="\n\n")
