"""Every statistic radmetrics reports over per-sample scores, in one place: percentile intervals, the bootstrap (of
items and of cases), paired comparisons of two systems (paired bootstrap and approximate randomisation), Kendall's
tau and preference accuracy. Nothing else in radmetrics resamples or computes these.

Reference for the meta-evaluation procedures: Yu et al. 2023 (RadCliQ paper), "Statistical analysis": 95% percentile
bootstrap CIs from 1,000 resamples with replacement; Kendall tau-b against radiologists' error counts. Paired
comparisons follow the usual practice for corpus metrics (Koehn 2004; Riezler & Maxwell 2005): a paired bootstrap of
the difference, and approximate randomisation (each pair's two systems swapped with probability 1/2).

Two paths give the same numbers. The general one takes the statistic as `aggregate(indices)`, so corpus-level metrics
(corpus BLEU-4, CheXbert F1, RadFact) are recomputed on each resample instead of being averaged per sample. A key whose
aggregate is the mean of its per-sample values takes the vectorised path (`bootstrap_mean_ci`, `paired_means`): the
same index arrays drawn in the same order from the same generator, one resample at a time as the loop draws them, then
every resample's mean at once. Each resample's mean is numpy's mean of one C-contiguous row, the same pairwise
summation over the same values in the same order as the loop's one-dimensional mean, so the intervals and p-values are
equal to the last bit (tests/inference/test_stats.py; benchmarks/speed/compare_stats_time.py at 10,000 pairs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

UNSCORABLE = -1  # a metric's pick when it could not score one of the two candidates
# The quantiles of the meta-evaluation's 95% case-bootstrap intervals (radpref, findings and significance agreement,
# baselines). The item bootstrap's intervals read them as `interval_tails(level)` (0.025000000000000022 at 0.95):
# the two differ in the last bits of an interpolated quantile, and both are kept so that no interval changes.
EXACT_95_TAILS = (0.025, 0.975)
_BLOCK_ELEMENTS = 1 << 22  # resamples gathered at once in the vectorised paths: 32 MiB of float64 per array


def precision_recall_f1(true_positives: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts; 0 where a denominator is 0."""
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def interval_tails(level: float = 0.95) -> tuple[float, float]:
    """The lower and upper quantile of a `level` percentile interval: (1 - level) / 2, computed in floating point, and
    1 minus it."""
    alpha = (1 - level) / 2
    return alpha, 1 - alpha


def percentile_interval(values, tails: tuple[float, float] = interval_tails(0.95)) -> list[float]:
    """[low, high] quantiles of `values` (NaNs left out; both NaN when nothing is left)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return [float("nan"), float("nan")]
    return [float(np.quantile(values, tails[0])), float(np.quantile(values, tails[1]))]


def scored_mean(values: np.ndarray) -> float:
    """Mean over the values that are not NaN (the scored pairs); NaN when none is."""
    scored = values[~np.isnan(values)]
    return float(np.mean(scored)) if len(scored) else float("nan")


def _row_blocks(rows: int, n: int):
    """(start, count) blocks of `rows` resamples of `n` items each, at most about _BLOCK_ELEMENTS items per block."""
    step = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, rows, step):
        yield start, min(step, rows - start)


def bootstrap_ci(
    aggregate: Callable[[np.ndarray], float], n: int, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile CI of `aggregate(indices)` over resamples of n items with replacement."""
    if n == 0 or n_resamples == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    boots = [aggregate(rng.integers(0, n, n)) for _ in range(n_resamples)]
    lo, hi = percentile_interval(boots, interval_tails(level))
    return lo, hi


def bootstrap_mean_ci(values, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """`bootstrap_ci` of the mean over the scored (non-NaN) values, the same numbers; vectorised when every value is
    scored, else the loop (leaving NaNs out of each resample changes which values a resample's mean sums)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if np.isnan(values).any():
        return bootstrap_ci(lambda idx: scored_mean(values[idx]), n, n_resamples, seed, level)
    if n == 0 or n_resamples == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    boots = np.empty(n_resamples)
    for start, rows in _row_blocks(n_resamples, n):
        draws = np.stack([rng.integers(0, n, n) for _ in range(rows)])  # one at a time: the loop's draws
        boots[start : start + rows] = values[draws].mean(axis=1)
    lo, hi = percentile_interval(boots, interval_tails(level))
    return lo, hi


def ratio_of_sums_interval(numerators: np.ndarray, denominators: np.ndarray, n_resamples: int, seed: int) -> list:
    """95% percentile interval (EXACT_95_TAILS, NaNs kept) of sum(numerators) / sum(denominators) over resamples of
    the items with replacement, all drawn at once (the clinical ranking suite's pairwise accuracy over cases)."""
    n = len(numerators)
    draws = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    ratios = numerators[draws].sum(axis=1) / denominators[draws].sum(axis=1)
    return [float(np.quantile(ratios, EXACT_95_TAILS[0])), float(np.quantile(ratios, EXACT_95_TAILS[1]))]


def case_resamples(cases: np.ndarray, n_resamples: int, seed: int) -> list[np.ndarray]:
    """Item indices of `n_resamples` bootstrap resamples of the cases (every item of a drawn case: RadPref's two
    candidates of a case share its reference)."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(cases == c) for c in range(cases.max() + 1)]
    return [
        np.concatenate([members[c] for c in rng.integers(0, len(members), len(members))]) for _ in range(n_resamples)
    ]


def bootstrap_differences(
    aggregate_a: Callable[[np.ndarray], float],
    aggregate_b: Callable[[np.ndarray], float],
    n: int,
    n_resamples: int,
    rng: np.random.Generator,
) -> list[float]:
    """The paired bootstrap: `aggregate_a(idx) - aggregate_b(idx)` on each of `n_resamples` resamples of the same n
    items, drawn from `rng` in order."""
    boots = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        boots.append(aggregate_a(idx) - aggregate_b(idx))
    return boots


def _comparison(value_a, value_b, boots, extreme: int, n: int, n_bootstrap: int, n_permutations: int) -> dict:
    return {
        "a": float(value_a),
        "b": float(value_b),
        "difference": float(value_a - value_b),
        "ci95": percentile_interval(boots),
        "p_value": float((extreme + 1) / (n_permutations + 1)),
        "n": int(n),
        "bootstrap": n_bootstrap,
        "permutations": n_permutations,
    }


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
    boots = bootstrap_differences(aggregate, lambda idx: aggregate(idx + n), n, n_bootstrap, rng)
    extreme = 0
    for _ in range(n_permutations):
        swap = rng.random(n) < 0.5
        permuted = aggregate(np.where(swap, items + n, items)) - aggregate(np.where(swap, items, items + n))
        extreme += abs(permuted) >= abs(difference) - 1e-12
    return _comparison(value_a, value_b, boots, extreme, n, n_bootstrap, n_permutations)


def _paired_means_vectorised(a: np.ndarray, b: np.ndarray, n_bootstrap: int, n_permutations: int, seed: int) -> dict:
    """`paired_comparison` of the means of a and b (no NaN in either), every resample's mean at once."""
    n = len(a)
    value_a, value_b = float(np.mean(a)), float(np.mean(b))
    difference = value_a - value_b
    rng = np.random.default_rng(seed)
    boots = np.empty(n_bootstrap)
    for start, rows in _row_blocks(n_bootstrap, n):
        draws = np.stack([rng.integers(0, n, n) for _ in range(rows)])  # one at a time: the loop's draws
        boots[start : start + rows] = a[draws].mean(axis=1) - b[draws].mean(axis=1)
    extreme = 0
    for _, rows in _row_blocks(n_permutations, n):
        swap = np.stack([rng.random(n) < 0.5 for _ in range(rows)])
        permuted = np.where(swap, b, a).mean(axis=1) - np.where(swap, a, b).mean(axis=1)
        extreme += int((np.abs(permuted) >= abs(difference) - 1e-12).sum())
    return _comparison(value_a, value_b, boots, extreme, n, n_bootstrap, n_permutations)


def paired_means(
    a, b, n_bootstrap: int = 1000, n_permutations: int = 10000, seed: int = 0, skip_nan: bool = False
) -> dict:
    """`paired_comparison` of the means of two per-item score arrays, the same numbers, vectorised when neither holds
    a NaN. With a NaN, the loop: each resample's mean is over its scored values with `skip_nan` (how a metric
    aggregates a mean key, so `radmetrics compare` gets the same), else NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError("a paired comparison needs at least one item")
    both = np.concatenate([a, b])
    if np.isnan(both).any():
        mean = scored_mean if skip_nan else (lambda values: float(values.mean()))
        return paired_comparison(lambda idx: mean(both[idx]), len(a), n_bootstrap, n_permutations, seed)
    return _paired_means_vectorised(a, b, n_bootstrap, n_permutations, seed)


def tau_value(x, y, variant: str = "b") -> float:
    """Kendall tau ("b" or "c") of x and y over the items where neither is NaN."""
    from scipy.stats import kendalltau

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    return float(kendalltau(x[keep], y[keep], variant=variant)[0])


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
        taus.append(tau_value(x[idx], y[idx], variant))
    return {f"tau_{variant}": float(tau), "p_value": float(p), "ci95": percentile_interval(taus), "n": int(len(x))}


def case_bootstrap_taus(
    scores: dict[str, np.ndarray], target: np.ndarray, resamples: list[np.ndarray], baseline: str | None = None
) -> dict:
    """Per key: tau-b of its scores against `target` with its 95% interval over `resamples` (`case_resamples`), and,
    when `baseline` is one of the keys, the paired difference from the baseline's tau-b on the same resamples."""
    boot = {
        key: np.array([tau_value(values[idx], target[idx]) for idx in resamples]) for key, values in scores.items()
    }
    report = {}
    for key, values in scores.items():
        entry = {"tau_b": tau_value(values, target), "ci95": percentile_interval(boot[key], EXACT_95_TAILS)}
        if baseline in scores and key != baseline:
            entry["vs_" + baseline] = {
                "difference": entry["tau_b"] - tau_value(scores[baseline], target),
                "ci95": percentile_interval(boot[key] - boot[baseline], EXACT_95_TAILS),
            }
        report[key] = entry
    return report


def picks(a, b) -> np.ndarray:
    """Per pair, the candidate a metric prefers from its quality-oriented values (higher = better): 1, 2, 0 for a tie,
    UNSCORABLE where either value is NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    picked = np.where(a > b, 1, np.where(b > a, 2, 0))
    return np.where(np.isnan(a) | np.isnan(b), UNSCORABLE, picked)


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


def paired_key_comparison(
    result, key: str, kept: np.ndarray, n: int, n_bootstrap: int, n_permutations: int, seed: int
):
    """`paired_comparison` of score key `key` of `result` (a ScoreResult of system A's n pairs, then B's n) on the
    pairs `kept` (A's pair i at i, B's at n + i). A mean-aggregated key takes `paired_means`, with the same numbers; a
    corpus-level key (`result.mean_values` is None) is recomputed on every resample."""
    index = np.concatenate([kept, kept + n])  # the paired index space of the kept pairs onto the combined one
    values = result.mean_values(key)
    if values is None:
        aggregate = lambda idx: result.aggregate(key, index[idx])  # noqa: E731
        return paired_comparison(aggregate, len(kept), n_bootstrap, n_permutations, seed)
    return paired_means(values[kept], values[kept + n], n_bootstrap, n_permutations, seed, skip_nan=True)
