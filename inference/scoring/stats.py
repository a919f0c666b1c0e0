"""Statistics over per-sample scores: bootstrap CIs, paired comparisons of two systems, Kendall's tau.

Reference for the meta-evaluation procedures: Yu et al. 2023 (RadCliQ paper), "Statistical analysis": 95% percentile
bootstrap CIs from 1,000 resamples with replacement; Kendall tau-b against radiologists' error counts. Paired
comparisons follow the usual practice for corpus metrics (Koehn 2004; Riezler & Maxwell 2005): a paired bootstrap of
the difference, and approximate randomisation (each pair's two systems swapped with probability 1/2).

Every function takes the statistic as `aggregate(indices)`, so corpus-level metrics (corpus BLEU-4, CheXbert F1)
are recomputed on each resample instead of being averaged per sample.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def precision_recall_f1(true_positives: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts; 0 where a denominator is 0."""
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _percentiles(values, level: float = 0.95) -> list[float]:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return [float("nan"), float("nan")]
    alpha = (1 - level) / 2
    return [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))]


def bootstrap_ci(
    aggregate: Callable[[np.ndarray], float], n: int, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile CI of `aggregate(indices)` over resamples of n items with replacement."""
    if n == 0 or n_resamples == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    lo, hi = _percentiles([aggregate(rng.integers(0, n, n)) for _ in range(n_resamples)], level)
    return lo, hi


def paired_comparison(
    aggregate: Callable[[np.ndarray], float],
    n: int,
    n_bootstrap: int = 1000,
    n_permutations: int = 10000,
    seed: int = 0,
) -> dict:
    """System A against system B on the same n items. `aggregate(indices)` reads a combined index space: A's item i
    at i, B's at n + i. Returns A's and B's values, the difference A - B with its paired-bootstrap 95% CI, and the
    two-sided approximate-randomisation p-value (add-one smoothed)."""
    if n == 0:
        raise ValueError("a paired comparison needs at least one item")
    items = np.arange(n)
    value_a, value_b = aggregate(items), aggregate(items + n)
    difference = value_a - value_b
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_bootstrap):
        idx = rng.integers(0, n, n)
        boots.append(aggregate(idx) - aggregate(idx + n))
    extreme = 0
    for _ in range(n_permutations):
        swap = rng.random(n) < 0.5
        permuted = aggregate(np.where(swap, items + n, items)) - aggregate(np.where(swap, items, items + n))
        extreme += abs(permuted) >= abs(difference) - 1e-12
    return {
        "a": float(value_a),
        "b": float(value_b),
        "difference": float(difference),
        "ci95": _percentiles(boots),
        "p_value": float((extreme + 1) / (n_permutations + 1)),
        "n": int(n),
        "bootstrap": n_bootstrap,
        "permutations": n_permutations,
    }


def paired_means(a, b, n_bootstrap: int = 1000, n_permutations: int = 10000, seed: int = 0) -> dict:
    """`paired_comparison` of the means of two per-item score arrays."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    both = np.concatenate([a, b])
    return paired_comparison(lambda idx: float(both[idx].mean()), len(a), n_bootstrap, n_permutations, seed)


def kendall_tau(x, y, variant: str = "b", n_resamples: int = 1000, seed: int = 0) -> dict:
    """Kendall tau ("b": ties-corrected, "c": Stuart's, for unequal numbers of distinct values) with a 95% percentile
    bootstrap CI over items (RadCliQ paper: 1,000 resamples) and scipy's p-value."""
    from scipy.stats import kendalltau

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    tau, p = kendalltau(x, y, variant=variant)
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(n_resamples):
        idx = rng.integers(0, len(x), len(x))
        taus.append(kendalltau(x[idx], y[idx], variant=variant)[0])
    return {f"tau_{variant}": float(tau), "p_value": float(p), "ci95": _percentiles(taus), "n": int(len(x))}


UNSCORABLE = -1  # a metric's pick when it could not score one of the two candidates


def preference_accuracy(picked, preferred, ties: str, n_resamples: int, seed: int) -> dict:
    """Accuracy of metric picks (1, 2, 0 = tie, UNSCORABLE = the metric could not score one of the two candidates)
    against human preferences (1, 2; 0 = no preference, left out). An unscorable pair is left out, never counted as a
    tie, and reported."""
    picked, preferred = np.asarray(picked), np.asarray(preferred)
    unscorable = (picked == UNSCORABLE) & (preferred != 0)
    keep = (preferred != 0) & ~unscorable
    if ties == "skip":
        keep &= picked != 0
    credit = np.where(
        picked[keep] == 0, 0.5 if ties == "half" else 0.0, (picked[keep] == preferred[keep]).astype(float)
    )
    n = int(keep.sum())
    accuracy = float(credit.mean()) if n else float("nan")
    return {
        "accuracy": accuracy,
        "ci95": list(bootstrap_ci(lambda idx: float(credit[idx].mean()), n, n_resamples, seed)),
        "n": n,
        "metric_ties": int(((picked == 0) & (preferred != 0) & ~unscorable).sum()),
        "human_ties_left_out": int((preferred == 0).sum()),
        "unscorable_left_out": int(unscorable.sum()),
    }
