"""CheXbert label F1 between reference and hypothesis reports (Smit et al. 2020 labels; the 14- and
5-label report-generation F1 of f1chexbert / RadEval, micro, macro and support-weighted).

Inputs are per-report lists of 14 head classes in CheXbert order (`components.CHEXPERT_CONDITIONS`):
0 blank, 1 positive, 2 negative, 3 uncertain. A class counts as positive when it is 1, or 1 or 3 with
`uncertain_as_positive=True` (default, the "uncertain = positive" convention); the reference labels
are the ground truth. The 5-label set is Cardiomegaly, Edema, Consolidation, Atelectasis, Pleural
Effusion. A label with no positive in either side has F1 0 in the macro mean (sklearn's zero_division=0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...loading.components import CHEXPERT_CONDITIONS

FIVE_LABELS = ("Cardiomegaly", "Edema", "Consolidation", "Atelectasis", "Pleural Effusion")


def binarize(labels: Sequence[Sequence[int]], uncertain_as_positive: bool = True) -> np.ndarray:
    array = np.asarray(labels)
    if array.ndim != 2 or array.shape[1] != len(CHEXPERT_CONDITIONS):
        raise ValueError(
            f"expected one list of {len(CHEXPERT_CONDITIONS)} head classes per report, got shape {array.shape}"
        )
    if not np.isin(array, (0, 1, 2, 3)).all():
        raise ValueError("CheXbert head classes must be 0 blank, 1 positive, 2 negative or 3 uncertain")
    positive = (1, 3) if uncertain_as_positive else (1,)
    return np.isin(array, positive).astype(int)


def f1_summary(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """micro / macro / weighted F1 of binary label matrices (reports x labels)."""
    tp = (truth & predicted).sum(axis=0)
    fp = ((1 - truth) & predicted).sum(axis=0)
    fn = (truth & (1 - predicted)).sum(axis=0)
    denominator = 2 * tp + fp + fn
    per_label = np.divide(2 * tp, denominator, out=np.zeros(len(tp)), where=denominator > 0)
    micro_denominator = 2 * tp.sum() + fp.sum() + fn.sum()
    support = tp + fn
    return {
        "micro": float(2 * tp.sum() / micro_denominator) if micro_denominator else 0.0,
        "macro": float(per_label.mean()),
        "weighted": float((per_label * support).sum() / support.sum()) if support.sum() else 0.0,
    }


def _ratio(numerator, denominator):
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)


def precision_recall_summary(truth: np.ndarray, predicted: np.ndarray) -> dict[str, dict[str, float]]:
    """{"precision" | "recall": {"micro", "macro"}} of binary label matrices, as sklearn's
    precision_recall_fscore_support gives them (zero_division=0: a label never predicted has precision 0, one never
    true recall 0), and per label."""
    tp = (truth & predicted).sum(axis=0)
    predicted_positive, true_positive = predicted.sum(axis=0), truth.sum(axis=0)
    per_precision, per_recall = _ratio(tp, predicted_positive), _ratio(tp, true_positive)
    return {
        "precision": {
            "micro": float(_ratio(tp.sum(), predicted_positive.sum())),
            "macro": float(per_precision.mean()),
            "per_label": per_precision.tolist(),
        },
        "recall": {
            "micro": float(_ratio(tp.sum(), true_positive.sum())),
            "macro": float(per_recall.mean()),
            "per_label": per_recall.tolist(),
        },
        "support": true_positive.tolist(),
    }


def chexbert_precision_recall(
    ref_labels: Sequence[Sequence[int]], hyp_labels: Sequence[Sequence[int]], uncertain_as_positive: bool = True
) -> dict[str, float]:
    """`chexbert_{precision,recall}_{14,5}_{micro,macro}` over all reports (the reference labels are the truth)."""
    truth = binarize(ref_labels, uncertain_as_positive)
    predicted = binarize(hyp_labels, uncertain_as_positive)
    five = [CHEXPERT_CONDITIONS.index(name) for name in FIVE_LABELS]
    scores = {}
    for n, columns in ((14, slice(None)), (5, five)):
        summary = precision_recall_summary(truth[:, columns], predicted[:, columns])
        for part in ("precision", "recall"):
            for kind in ("micro", "macro"):
                scores[f"chexbert_{part}_{n}_{kind}"] = summary[part][kind]
    return scores


def per_condition(ref_labels, hyp_labels, uncertain_as_positive: bool = True) -> dict[str, dict]:
    """Each of the 14 conditions' precision, recall, F1 and support over all reports."""
    truth = binarize(ref_labels, uncertain_as_positive)
    predicted = binarize(hyp_labels, uncertain_as_positive)
    summary = precision_recall_summary(truth, predicted)
    table = {}
    for i, name in enumerate(CHEXPERT_CONDITIONS):
        p, r = summary["precision"]["per_label"][i], summary["recall"]["per_label"][i]
        table[name] = {
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "support": int(summary["support"][i]),
        }
    return table


def chexbert_f1(
    ref_labels: Sequence[Sequence[int]], hyp_labels: Sequence[Sequence[int]], uncertain_as_positive: bool = True
) -> dict[str, float]:
    """`chexbert_f1_{14,5}_{micro,macro,weighted}` over all reports."""
    truth = binarize(ref_labels, uncertain_as_positive)
    predicted = binarize(hyp_labels, uncertain_as_positive)
    if truth.shape != predicted.shape:
        raise ValueError(f"{truth.shape[0]} reference label rows but {predicted.shape[0]} hypothesis rows")
    five = [CHEXPERT_CONDITIONS.index(name) for name in FIVE_LABELS]
    scores = {}
    for n, columns in ((14, slice(None)), (5, five)):
        for kind, value in f1_summary(truth[:, columns], predicted[:, columns]).items():
            scores[f"chexbert_f1_{n}_{kind}"] = value
    return scores
