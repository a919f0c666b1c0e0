"""Two labelers against NegBio's manual labels on the same held-out reports.

Per label, precision / recall / F1 of "positive" (a labeler's 1; its uncertain and negative count as not positive,
as data_builders/agreement/labeler.py scores the rule labeler), 0 where undefined; macro F1 is their plain mean over
the shared labels. Intervals resample reports (inference/scoring/stats.py): a 95% percentile bootstrap for each macro
F1, and the paired bootstrap and approximate-randomisation test (Koehn 2004; Riezler & Maxwell 2005) for the
difference, with macro F1 recomputed from counts on every resample rather than averaged per report.
"""

from __future__ import annotations

import numpy as np

from radmetrics.inference.scoring.stats import bootstrap_ci, paired_comparison, precision_recall_f1


def per_label_scores(gold: np.ndarray, predicted: np.ndarray, labels: list[str]) -> dict[str, dict]:
    """{label: precision, recall, f1, support, predicted} from boolean (reports x labels) arrays."""
    scores = {}
    for j, label in enumerate(labels):
        tp = int((gold[:, j] & predicted[:, j]).sum())
        precision, recall, f1 = precision_recall_f1(tp, int(predicted[:, j].sum()), int(gold[:, j].sum()))
        scores[label] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": int(gold[:, j].sum()),
            "predicted": int(predicted[:, j].sum()),
        }
    return scores


def macro_f1(gold: np.ndarray, predicted: np.ndarray) -> float:
    tp = (gold & predicted).sum(0)
    denominator = gold.sum(0) + predicted.sum(0)  # 2TP + FP + FN
    return float(np.mean(np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0)))


def compare_labelers(
    gold: np.ndarray,
    model: np.ndarray,
    rule: np.ndarray,
    labels: list[str],
    n_bootstrap: int = 1000,
    n_permutations: int = 10000,
    seed: int = 0,
) -> dict:
    """The labeler (`model`) against the rule labeler on the same reports: boolean (reports x labels) arrays."""
    gold, model, rule = (np.asarray(a, dtype=bool) for a in (gold, model, rule))
    if not gold.shape == model.shape == rule.shape or gold.shape[1] != len(labels):
        raise ValueError(
            f"gold, model and rule arrays must all be reports x {len(labels)} labels, got "
            f"{gold.shape}, {model.shape}, {rule.shape}"
        )
    n = len(gold)
    both_gold, both_predicted = np.concatenate([gold, gold]), np.concatenate([model, rule])
    paired = paired_comparison(
        lambda idx: macro_f1(both_gold[idx], both_predicted[idx]), n, n_bootstrap, n_permutations, seed
    )
    return {
        "reports": n,
        "labels": list(labels),
        "model_macro_f1": paired["a"],
        "rule_macro_f1": paired["b"],
        "model_macro_f1_ci95": list(bootstrap_ci(lambda idx: macro_f1(gold[idx], model[idx]), n, n_bootstrap, seed)),
        "rule_macro_f1_ci95": list(bootstrap_ci(lambda idx: macro_f1(gold[idx], rule[idx]), n, n_bootstrap, seed)),
        "diff": paired["difference"],
        "diff_ci95": paired["ci95"],
        "diff_p_value": paired["p_value"],
        "bootstrap_resamples": n_bootstrap,
        "permutations": n_permutations,
        "model_per_label": per_label_scores(gold, model, labels),
        "rule_per_label": per_label_scores(gold, rule, labels),
    }
