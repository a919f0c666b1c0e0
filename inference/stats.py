"""Statistics over per-sample scores: bootstrap CIs, paired tests, Kendall tau-b.

Reference for the meta-evaluation procedures: Yu et al. 2023 (RadCliQ paper), "Statistical analysis":
95% percentile bootstrap CIs from 1,000 resamples with replacement; tau-b against the mean error count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def precision_recall_f1(true_positives: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts; 0 where a denominator is 0."""
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def bootstrap_ci(aggregate: Callable[[np.ndarray], float], n: int, n_resamples: int = 1000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile CI of `aggregate(indices)` over resamples of n items with replacement."""
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    stats = np.array([aggregate(rng.integers(0, n, n)) for _ in range(n_resamples)], dtype=float)
    stats = stats[~np.isnan(stats)]
    if not len(stats):
        return (float("nan"), float("nan"))
    alpha = (1 - level) / 2
    return (float(np.quantile(stats, alpha)), float(np.quantile(stats, 1 - alpha)))


def paired_bootstrap(a, b, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Paired bootstrap of mean(a) - mean(b) over the same items; p = share of resamples where the sign flips."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    diff = a - b
    rng = np.random.default_rng(seed)
    means = np.array([diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(n_resamples)])
    observed = float(diff.mean())
    p = float(np.mean(means <= 0) if observed > 0 else np.mean(means >= 0))
    return {"difference": observed, "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))],
            "p_value": min(1.0, 2 * p), "n": int(len(diff))}


def approximate_randomization(a, b, n_resamples: int = 10000, seed: int = 0) -> dict:
    """Two-sided approximate randomization test: swap each pair's systems with probability 1/2."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    observed = abs(a.mean() - b.mean())
    rng = np.random.default_rng(seed)
    diff = a - b
    signs = rng.choice([-1.0, 1.0], size=(n_resamples, len(diff)))
    extreme = np.sum(np.abs((signs * diff).mean(axis=1)) >= observed - 1e-12)
    return {"difference": float(a.mean() - b.mean()), "p_value": float((extreme + 1) / (n_resamples + 1)), "n": int(len(diff))}


def kendall_tau_b(x, y, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Kendall tau-b with a 95% percentile bootstrap CI over items (RadCliQ paper, 1,000 resamples)."""
    from scipy.stats import kendalltau

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    tau, p = kendalltau(x, y, variant="b")
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(n_resamples):
        idx = rng.integers(0, len(x), len(x))
        t = kendalltau(x[idx], y[idx], variant="b")[0]
        if not np.isnan(t):
            taus.append(t)
    ci = [float(np.quantile(taus, 0.025)), float(np.quantile(taus, 0.975))] if taus else [float("nan")] * 2
    return {"tau_b": float(tau), "p_value": float(p), "ci95": ci, "n": int(len(x))}
