"""Per-class decision offsets for the relation head, chosen on validation after training.

A class-weighted loss makes rare relations (`suggestive_of`) predicted at all, but it also shifts every class's
logits, so the frequent classes are over-predicted against the null class (benchmarks/README.md, "Every class
learned"). Adding a constant to each class's logit before the argmax moves each decision boundary without
retraining; the offsets are chosen by coordinate ascent on the validation split's relation macro F1 (micro F1 breaks
ties; the smallest offset breaks the rest), with the model's own entities feeding its relations, exactly as at
inference. The null class keeps offset 0, and so does a class without validation support (macro F1 would not see it,
and the micro tie-break would switch it off), so only the supported non-null classes' offsets are free.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from radmetrics.inference.models.span_extraction import relations_from_logits

from .scores import span_scores

GRID = tuple(float(x) for x in np.round(np.arange(-4.0, 4.0 + 1e-9, 0.25), 2))
PASSES = 2


def relation_scores(
    scored: Sequence[tuple], gold: Sequence[set], labels: Sequence[str], offsets: Sequence[float]
) -> dict:
    """span_scores of the relations decided with `offsets` from `scored` (SpanExtractorRunner.scored's output)."""
    predicted = [
        {tuple(r) for r in relations_from_logits(entities, logits, labels, offsets)} for entities, logits in scored
    ]
    return span_scores(gold, predicted, labels[1:])


def tune_relation_offsets(
    scored: Sequence[tuple],
    gold: Sequence[set],
    labels: Sequence[str],
    grid: Sequence[float] = GRID,
    passes: int = PASSES,
) -> dict:
    """Offsets (null first, always 0) maximising (macro F1, micro F1, -sum |offset|) over `grid`, one class at a time
    for `passes` rounds. Returns the offsets and the validation scores before and after."""
    offsets = [0.0] * len(labels)

    def key(candidate: list[float]) -> tuple[float, float, float]:
        scores = relation_scores(scored, gold, labels, candidate)
        return round(scores["macro_f1"], 12), round(scores["f1"], 12), -sum(map(abs, candidate))

    best = key(offsets)
    supported = {relation[-1] for relations in gold for relation in relations}
    for _ in range(passes):
        for class_id in (
            i for i in range(1, len(labels)) if labels[i] in supported
        ):  # others keep 0: no evidence to move them
            for value in grid:
                candidate = offsets[:class_id] + [value] + offsets[class_id + 1 :]
                score = key(candidate)
                if score > best:
                    best, offsets = score, candidate
    before, after = (
        relation_scores(scored, gold, labels, [0.0] * len(labels)),
        relation_scores(scored, gold, labels, offsets),
    )
    return {
        "offsets": offsets,
        "validation_before": {"macro_f1": before["macro_f1"], "f1": before["f1"]},
        "validation_after": {"macro_f1": after["macro_f1"], "f1": after["f1"]},
    }
