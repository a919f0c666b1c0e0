"""The one scorer of every span recipe (RaTE-NER IOB and span, RadGraph entities and relations): exact-match
precision, recall and F1 over per-sentence sets of tuples whose last element is the class, micro over all classes,
macro over the classes with gold support, and each class's row with its support and how often it was predicted.

On non-overlapping spans read from IOB tags this is seqeval's default (lenient) entity scoring, micro and per type
(`tests/training/test_span_scores.py` checks it against seqeval through `evaluate`); unlike seqeval it also scores
nested or overlapping spans and relations. A class with gold support that the model never predicts is listed under
`never_predicted`, so an average cannot hide it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from radmetrics.inference.scoring.stats import precision_recall_f1

STATISTICS = ("precision", "recall", "f1")


def iob_spans(tags: Sequence[str]) -> set[tuple[int, int, str]]:
    """(start, end, type) of each entity in IOB tags, read as seqeval reads them by default (an I- without its B-
    starts an entity)."""
    from seqeval.metrics.sequence_labeling import get_entities

    return {(start, end, kind) for kind, start, end in get_entities(list(tags))}


def prf(true_positives: int, predicted: int, gold: int, prefix: str = "") -> dict[str, float]:
    return dict(zip((f"{prefix}{name}" for name in STATISTICS), precision_recall_f1(true_positives, predicted, gold)))


def span_scores(gold: Sequence[set], predicted: Sequence[set], labels: Iterable[str] = (), prefix: str = "") -> dict:
    """Micro `precision`/`recall`/`f1`; for each of `labels` (every class the schema names, so a class never
    predicted, or absent from the gold data, still shows its zeros) `precision_L`, `recall_L`, `f1_L`, `support_L`
    (gold count) and `predicted_L`; `macro_f1` over the labels with support; `never_predicted`, the labels with
    support and no prediction. Keys carry `prefix`."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    scores: dict = prf(
        sum(len(g & p) for g, p in zip(gold, predicted)), sum(map(len, predicted)), sum(map(len, gold)), prefix
    )
    supported_f1, never_predicted = [], []
    for label in labels:
        g = [{t for t in s if t[-1] == label} for s in gold]
        p = [{t for t in s if t[-1] == label} for s in predicted]
        hits, guessed, support = sum(len(a & b) for a, b in zip(g, p)), sum(map(len, p)), sum(map(len, g))
        per_label = prf(hits, guessed, support)
        scores.update({f"{prefix}{name}_{label}": value for name, value in per_label.items()})
        scores[f"{prefix}support_{label}"] = support
        scores[f"{prefix}predicted_{label}"] = guessed
        if support:
            supported_f1.append(per_label["f1"])
            if not guessed:
                never_predicted.append(label)
    if labels:
        scores[f"{prefix}macro_f1"] = sum(supported_f1) / len(supported_f1) if supported_f1 else 0.0
        scores[f"{prefix}never_predicted"] = never_predicted
    return scores


def span_classification_scores(logits, span_labels, label_names=()) -> dict[str, float]:
    """Trainer-time span scores from per-candidate argmax (no overlap decoding): cheap checkpoint selection. Micro
    over the non-null classes, the F1 of each class in `label_names` (index = class id, the null class first) and
    `macro_f1` over the classes with support."""
    import numpy as np

    predicted = np.asarray(logits).argmax(-1)
    labels = np.asarray(span_labels)
    valid = labels != -100
    hits = int(((predicted == labels) & (labels > 0) & valid).sum())
    scores = prf(hits, int(((predicted > 0) & valid).sum()), int(((labels > 0) & valid).sum()))
    supported_f1 = []
    for class_id, name in enumerate(label_names[1:], start=1):
        gold, guessed = (labels == class_id) & valid, (predicted == class_id) & valid
        scores[f"f1_{name}"] = prf(int((gold & guessed).sum()), int(guessed.sum()), int(gold.sum()))["f1"]
        if gold.any():
            supported_f1.append(scores[f"f1_{name}"])
    if label_names:
        scores["macro_f1"] = float(np.mean(supported_f1)) if supported_f1 else 0.0
    return scores
