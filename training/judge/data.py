"""The judge recipe's data: the finding pairs of `radmetrics data judge-pairs` (built from the bundled IU X-ray corpus
into the run directory when no `pairs_dir` is given), and its held-out scores per label beside trivial baselines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from radmetrics.inference.findings.judge_labels import DECISIONS, JUDGE_LABELS, parse_label

SPLITS = ("train", "validation", "test")


@dataclass
class JudgeDataArguments:
    pairs_dir: str | None = field(
        default=None,
        metadata={
            "help": (
                "output of `radmetrics data judge-pairs` ({train,validation,test}.jsonl); when unset, pairs of the "
                "bundled IU X-ray corpus are built into OUTPUT_DIR/pairs"
            )
        },
    )
    per_label: int = field(default=1500, metadata={"help": "when building pairs: training pairs per label at most"})
    max_train_samples: int | None = field(default=None, metadata={"help": "the first N training pairs only"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "the first N validation and test pairs"})
    max_seq_length: int = field(default=96, metadata={"help": "tokens per (reference, candidate) pair"})


def load_pairs(data_args: JudgeDataArguments, output_dir: str) -> tuple[dict[str, list[dict]], dict]:
    """split -> pair records, and their provenance."""
    from radmetrics.inference.files.report_io import read_jsonl_records

    from ..common.distributed import build_once

    root = Path(data_args.pairs_dir) if data_args.pairs_dir else Path(output_dir) / "pairs"
    if data_args.pairs_dir:
        missing = [s for s in SPLITS if not (root / f"{s}.jsonl").is_file()]
        if missing:
            raise FileNotFoundError(f"{root}: no {missing[0]}.jsonl; run `radmetrics data judge-pairs --out {root}`")
    else:
        build_once(root / "built", lambda: build_bundled_pairs(root, data_args.per_label))
    data = {}
    for split in SPLITS:
        records = [r for _, r in read_jsonl_records(root / f"{split}.jsonl", ("reference", "candidate", "label"))]
        bad = next((r for r in records if r["label"] not in JUDGE_LABELS), None)
        if bad is not None:
            raise ValueError(f"{root}/{split}.jsonl: pair {bad.get('id')} has the unknown label {bad['label']!r}")
        limit = data_args.max_train_samples if split == "train" else data_args.max_eval_samples
        data[split] = records[:limit] if limit else records
    return data, {"pairs_dir": str(root), **{f"{s}_pairs": len(r) for s, r in data.items()}}


def build_bundled_pairs(root: Path, per_label: int) -> None:
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.judge_pairs.build import build_judge_pairs
    from radmetrics.data_builders.judge_pairs.command import write_judge_pairs

    reports = [r for r in iu_xray_corpus() if r.text]
    pairs = build_judge_pairs(reports, assign_splits(reports), per_label)
    provenance = {"corpus": "iu_xray", "path": "bundled", "split_by": "text", "seed": 0, "per_label": per_label}
    write_judge_pairs(pairs, root, provenance)


def per_class(gold: list[str], predicted: list[str], classes, prefix: str) -> dict:
    """Precision, recall, F1, support and predicted count of each class, and their macro and micro averages."""
    results, f1s = {}, []
    for name in classes:
        tp = sum(g == name and p == name for g, p in zip(gold, predicted))
        support, guessed = gold.count(name), predicted.count(name)
        precision = tp / guessed if guessed else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        results.update(
            {
                f"{prefix}precision_{name}": precision,
                f"{prefix}recall_{name}": recall,
                f"{prefix}f1_{name}": f1,
                f"{prefix}support_{name}": support,
                f"{prefix}predicted_{name}": guessed,
            }
        )
        if support:
            f1s.append(f1)
    results[f"{prefix}macro_f1"] = sum(f1s) / len(f1s) if f1s else 0.0
    results[f"{prefix}accuracy"] = sum(g == p for g, p in zip(gold, predicted)) / len(gold) if gold else 0.0
    return results


def decision_of(label: str) -> str:
    return parse_label(label).decision


def judge_scores(gold: list[str], predicted: list[str], prefix: str, per_label: bool = True) -> dict:
    """Label-level scores (per label when `per_label`), and the decision-level ones (same, attribute error,
    contradiction, unrelated), with the attribute's and the significance's accuracy on true attribute errors."""
    results = {}
    if per_label:
        results.update(per_class(gold, predicted, JUDGE_LABELS, f"{prefix}"))
    else:
        scores = per_class(gold, predicted, JUDGE_LABELS, "")
        results.update({f"{prefix}macro_f1": scores["macro_f1"], f"{prefix}accuracy": scores["accuracy"]})
    decisions = per_class([decision_of(g) for g in gold], [decision_of(p) for p in predicted], DECISIONS, "")
    results[f"{prefix}decision_macro_f1"] = decisions["macro_f1"]
    results[f"{prefix}decision_accuracy"] = decisions["accuracy"]
    attribute_pairs = [(parse_label(g), parse_label(p)) for g, p in zip(gold, predicted) if g.startswith("attribute")]
    if attribute_pairs:
        results[f"{prefix}attribute_kind_accuracy"] = sum(g.kind == p.kind for g, p in attribute_pairs) / len(
            attribute_pairs
        )
        results[f"{prefix}attribute_significance_accuracy"] = sum(
            p.decision == "attribute_error" and g.significant == p.significant for g, p in attribute_pairs
        ) / len(attribute_pairs)
    return results


def rules_labels(records: list[dict]) -> list[str]:
    """The word rules' label of each pair (semantic_green judge=rules on a matched pair; never `unrelated`)."""
    from radmetrics.inference.metrics.semantic_green.judge import rules_decision

    return [rules_decision(r["reference"], r["candidate"]).label for r in records]


def held_out_scores(data: dict, predicted: list[str], run_dir) -> dict:
    """Test scores of `predicted` (one label per test pair) per label and decision, beside the majority label's and
    the word rules'; every prediction written to test_predictions.jsonl."""
    from collections import Counter

    from ..common.lifecycle import write_test_predictions

    gold = [r["label"] for r in data["test"]]
    majority = Counter(r["label"] for r in data["train"]).most_common(1)[0][0]
    rules = rules_labels(data["test"])
    results = judge_scores(gold, predicted, "test_")
    results.update(judge_scores(gold, [majority] * len(gold), "baseline_majority_test_", per_label=False))
    results.update(judge_scores(gold, rules, "baseline_rules_test_", per_label=False))
    write_test_predictions(
        run_dir,
        [
            {"id": r.get("id"), "label": g, "predicted": p, "rules": q, "majority": majority}
            for r, g, p, q in zip(data["test"], gold, predicted, rules)
        ],
    )
    return results
