"""Search RaTEScore's affinity matrix W and negation penalty p against human judgements with TPE
(Zhao et al. 2024, section 2.3: the 25 type-pair weights and p "tuned with TPE" on human ratings).

Best matches do not depend on W, so each pair's matches are computed once and every trial only
re-weights them. The objective is Kendall tau-b between the RaTEScore and the human column, oriented
so that higher is better (`human_higher_is_better=False` for error counts). The bundled "long" matrix
is enqueued as the first trial, so the result is never worse than the default on the tuning data; that in-sample
figure says little, so with `folds` > 1 the search is also run on each training split and the tuned and bundled
matrices are compared on the held-out split (`held_out`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ...loading.extras import require
from ...scoring.stats import tau_value
from ..shared.folds import fold_indices
from .score import ENTITY_TYPES, affinity_to_json, embed_entity_lists, load_affinity, pair_matches, score_from_matches

TYPE_PAIRS = [(a, b) for a, b in itertools.product(ENTITY_TYPES, ENTITY_TYPES)]


def _param(pair: tuple[str, str]) -> str:
    return f"{pair[0].lower()}_{pair[1].lower()}"


def _search(matches, target: np.ndarray, n_trials: int, seed: int) -> tuple[dict, float]:
    """TPE over W and p on precomputed matches; the bundled long matrix is the first trial."""
    import optuna

    def objective(trial) -> float:
        weights = {pair: trial.suggest_float(_param(pair), 0.0, 1.0) for pair in TYPE_PAIRS}
        return _tau(matches, target, weights, trial.suggest_float("neg_weight", 0.0, 1.0))

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    default_weights, default_neg = load_affinity("long")
    study.enqueue_trial({**{_param(p): default_weights[p] for p in TYPE_PAIRS}, "neg_weight": default_neg})
    study.optimize(objective, n_trials=n_trials, show_progress_bar=n_trials >= 50)
    best = study.best_params
    return {pair: best[_param(pair)] for pair in TYPE_PAIRS}, best["neg_weight"]


def _tau(matches, target: np.ndarray, weights, neg_weight) -> float:
    """The search's objective: tau-b of the scores against the target; -1 where it is undefined (constant scores)."""
    scores = [score_from_matches(f, b, weights, neg_weight) for f, b in matches]
    value = tau_value(scores, target)
    return -1.0 if np.isnan(value) else value


def tune_ratescore(
    ref_entities,
    cand_entities,
    human: Sequence[float],
    n_trials: int = 200,
    seed: int = 0,
    human_higher_is_better: bool = False,
    encoder: str = "default",
    pooling: str = "mean",
    folds: int = 5,
) -> dict:
    if not (len(ref_entities) == len(cand_entities) == len(human)):
        raise ValueError("reference entities, candidate entities and human scores must have the same length")
    require("optuna", extra="train", for_what="RaTEScore tuning (its TPE search)")
    refs = embed_entity_lists(ref_entities, encoder, pooling)
    cands = embed_entity_lists(cand_entities, encoder, pooling)
    matches = [pair_matches(r[0], r[1], c[0], c[1]) for r, c in zip(refs, cands)]
    target = np.asarray(human, dtype=float) * (1.0 if human_higher_is_better else -1.0)
    default_weights, default_neg = load_affinity("long")
    weights, neg_weight = _search(matches, target, n_trials, seed)
    result = {
        "affinity": affinity_to_json(weights, neg_weight),
        "tau_b": _tau(matches, target, weights, neg_weight),
        "default_long_tau_b": _tau(matches, target, default_weights, default_neg),
        "n_trials": n_trials,
        "n_pairs": len(human),
    }
    if folds > 1:
        per_fold = []
        for held in fold_indices(len(matches), folds, seed):
            train = np.setdiff1d(np.arange(len(matches)), held)
            fold_weights, fold_neg = _search([matches[i] for i in train], target[train], n_trials, seed)
            held_matches = [matches[i] for i in held]
            per_fold.append(
                {
                    "n": int(len(held)),
                    "tuned_tau_b": _tau(held_matches, target[held], fold_weights, fold_neg),
                    "default_long_tau_b": _tau(held_matches, target[held], default_weights, default_neg),
                }
            )
        result["held_out"] = {
            "folds": folds,
            "per_fold": per_fold,
            "tuned_tau_b": float(np.mean([f["tuned_tau_b"] for f in per_fold])),
            "default_long_tau_b": float(np.mean([f["default_long_tau_b"] for f in per_fold])),
        }
    return result
