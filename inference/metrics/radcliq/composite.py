"""RadCliQ v0 and v1 (Yu et al., Patterns 2023, "Composite metric RadCliQ"; rajpurkarlab/CXR-Report-Metric).

Both predict a report's number of radiologist-reported errors from four sub-scores, in the feature
order [radgraph_combined, bertscore, semb_score, bleu2]; lower is better. v0 is the unconstrained
linear regression on normalised features; v1 the constrained fit (negated coefficients non-negative,
summing to 1), the version the paper reports. The corpus value is the mean of per-sample values
(RadEval instead reports 1/mean for v1; use `radcliq_v1_radeval` for that convention).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np

from ..shared.folds import fold_indices

PARAMS = Path(str(files("radmetrics.inference").joinpath("resources", "radcliq_parameters.json")))
FEATURES = ("radgraph_radcliq", "bertscore", "chexbert_similarity", "bleu2")


@lru_cache(maxsize=1)
def _params() -> dict:
    return json.loads(PARAMS.read_text(encoding="utf-8"))


def _features(radgraph, bertscore, semb, bleu2) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=float) for v in (radgraph, bertscore, semb, bleu2)], axis=-1)


def radcliq_v0(radgraph, bertscore, semb, bleu2):
    """RadCliQ-v0 of one pair (floats) or of arrays of pairs: LinearRegression on StandardScaler features."""
    p = _params()["radcliq_v0"]
    x = (_features(radgraph, bertscore, semb, bleu2) - p["normalizer_mean_"]) / p["normalizer_scale_"]
    out = x @ np.asarray(p["coef_"]) + p["intercept_"]
    return float(out) if np.ndim(out) == 0 else out


def load_constants(path: str | Path) -> dict:
    """RadCliQ-v1 constants refitted by `fit_radcliq` (`meta-eval fit-radcliq`), checked to be usable."""
    try:
        params = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"RadCliQ constants {path}: not a readable JSON file ({exc})") from exc
    if params.get("feature_order") != list(FEATURES):
        raise ValueError(
            f"RadCliQ constants {path}: feature_order must be {list(FEATURES)}, found {params.get('feature_order')}"
        )
    for key, size in (("scaler_mean_", 4), ("scaler_scale_", 4), ("coefs_with_bias_last", 5)):
        if not isinstance(params.get(key), list) or len(params[key]) != size:
            raise ValueError(f"RadCliQ constants {path}: {key} must list {size} numbers")
    return params


def radcliq_v1(radgraph, bertscore, semb, bleu2, params: dict | None = None):
    """RadCliQ-v1 of one pair (floats) or arrays: [(x - mean) / scale, 1] @ coefs. `params`: refitted constants
    (`load_constants`); default the published ones."""
    p = params or _params()["radcliq_v1"]
    x = (_features(radgraph, bertscore, semb, bleu2) - p["scaler_mean_"]) / p["scaler_scale_"]
    coefs = np.asarray(p["coefs_with_bias_last"])
    out = x @ coefs[:-1] + coefs[-1]
    return float(out) if np.ndim(out) == 0 else out


def radcliq_v1_radeval(per_sample_v1) -> float:
    """RadEval's corpus convention for RadCliQ-v1: 1 / mean(per-sample score)."""
    return float(1.0 / np.mean(per_sample_v1))


def fit_radcliq(features: np.ndarray, errors: np.ndarray) -> dict:
    """Refit the constrained composite (paper: negated coefficients >= 0 and summing to 1).

    features: (n, 4) in FEATURES order; errors: (n,) total radiologist error counts.
    Returns scaler mean/scale and coefficients with the bias last, in radcliq_v1's layout.
    The least-squares problem the paper solves with CVXPY, solved exactly by `simplex_least_squares`.
    """
    features, errors = np.asarray(features, dtype=float), np.asarray(errors, dtype=float)
    if features.ndim != 2 or features.shape[1] != len(FEATURES) or len(features) != len(errors):
        raise ValueError(f"need features of shape (n, {len(FEATURES)}) and n error counts")
    mean, scale = features.mean(axis=0), features.std(axis=0)
    scale[scale == 0] = 1.0
    x = (features - mean) / scale
    # min |x w + b - errors|^2 with w = -v, v on the simplex; the bias is free, so centre both sides and recover it.
    x_mean, errors_mean = x.mean(axis=0), errors.mean()
    v = simplex_least_squares(-(x - x_mean), errors - errors_mean)
    w = -v
    b = errors_mean - float(x_mean @ w)
    return {
        "feature_order": list(FEATURES),
        "scaler_mean_": mean.tolist(),
        "scaler_scale_": scale.tolist(),
        "coefs_with_bias_last": [*map(float, w), float(b)],
        "n_samples": int(len(errors)),
    }


def simplex_least_squares(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """argmin |a v - y|^2 over v >= 0 with sum(v) = 1, exactly: the problem is convex, so its minimum is the
    stationary point, within one face of the simplex, that is feasible and lowest. With four columns there are 15
    faces; each face's equality-constrained least squares is one KKT system (scipy.linalg.lstsq, so that a
    rank-deficient face still has its minimum-norm solution)."""
    from itertools import combinations

    from scipy.linalg import lstsq

    a, y = np.asarray(a, dtype=float), np.asarray(y, dtype=float)
    k = a.shape[1]
    gram, rhs = a.T @ a, a.T @ y
    tolerance = 1e-12 * max(1.0, float(np.abs(gram).max()))
    best, best_loss = None, np.inf
    for size in range(1, k + 1):
        for face in map(list, combinations(range(k), size)):
            kkt = np.zeros((size + 1, size + 1))
            kkt[:size, :size], kkt[:size, size], kkt[size, :size] = gram[np.ix_(face, face)], 1.0, 1.0
            solution = lstsq(kkt, np.append(rhs[face], 1.0))[0][:size]
            if np.any(solution < -1e-10) or not np.isfinite(solution).all():
                continue
            v = np.zeros(k)
            v[face] = np.clip(solution, 0.0, None) / np.clip(solution, 0.0, None).sum()
            loss = float(np.sum((a @ v - y) ** 2))
            if loss < best_loss - tolerance:
                best, best_loss = v, loss
    if best is None:
        raise RuntimeError("the constrained fit found no feasible solution")
    return best


def cross_validate_radcliq(features: np.ndarray, errors: np.ndarray, folds: int = 5, seed: int = 0) -> dict:
    """Held-out Kendall tau-b between human error counts and RadCliQ-v1 with constants refitted on the other folds,
    next to the published constants on the same folds (mean over folds)."""
    from scipy.stats import kendalltau

    features, errors = np.asarray(features, dtype=float), np.asarray(errors, dtype=float)
    per_fold = []
    for held in fold_indices(len(errors), folds, seed):
        train = np.setdiff1d(np.arange(len(errors)), held)
        refit = fit_radcliq(features[train], errors[train])
        refit_scores = radcliq_v1(*features[held].T, params=refit)
        published = radcliq_v1(*features[held].T)
        per_fold.append(
            {
                "n": int(len(held)),
                "refit_tau_b": float(kendalltau(refit_scores, errors[held])[0]),
                "published_tau_b": float(kendalltau(published, errors[held])[0]),
            }
        )
    return {
        "folds": folds,
        "seed": seed,
        "per_fold": per_fold,
        "refit_tau_b": float(np.nanmean([f["refit_tau_b"] for f in per_fold])),
        "published_tau_b": float(np.nanmean([f["published_tau_b"] for f in per_fold])),
    }
