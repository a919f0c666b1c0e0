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
    """Refit the constrained composite (paper: negated coefficients >= 0 and summing to 1; CVXPY).

    features: (n, 4) in FEATURES order; errors: (n,) total radiologist error counts.
    Returns scaler mean/scale and coefficients with the bias last, in radcliq_v1's layout.
    """
    import cvxpy as cp

    features, errors = np.asarray(features, dtype=float), np.asarray(errors, dtype=float)
    if features.ndim != 2 or features.shape[1] != len(FEATURES) or len(features) != len(errors):
        raise ValueError(f"need features of shape (n, {len(FEATURES)}) and n error counts")
    mean, scale = features.mean(axis=0), features.std(axis=0)
    scale[scale == 0] = 1.0
    x = (features - mean) / scale
    w, b = cp.Variable(len(FEATURES)), cp.Variable()
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x @ w + b - errors)), [-w >= 0, cp.sum(-w) == 1])
    problem.solve()
    if w.value is None:
        raise RuntimeError(f"the constrained fit did not converge (status {problem.status})")
    return {
        "feature_order": list(FEATURES),
        "scaler_mean_": mean.tolist(),
        "scaler_scale_": scale.tolist(),
        "coefs_with_bias_last": [*map(float, w.value), float(b.value)],
        "n_samples": int(len(errors)),
    }


def fold_indices(n: int, folds: int, seed: int = 0) -> list[np.ndarray]:
    """`folds` disjoint held-out index sets covering range(n), shuffled with `seed`."""
    if not 1 < folds <= n:
        raise ValueError(f"cross-validation needs 2 <= folds <= {n} items, got {folds}")
    return np.array_split(np.random.default_rng(seed).permutation(n), folds)


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
