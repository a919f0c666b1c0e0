"""Cross-validation folds: RadCliQ's held-out refit and RaTEScore's TPE tuning split their items the same way."""

from __future__ import annotations

import numpy as np


def fold_indices(n: int, folds: int, seed: int = 0) -> list[np.ndarray]:
    """`folds` disjoint held-out index sets covering range(n), shuffled with `seed`."""
    if not 1 < folds <= n:
        raise ValueError(f"cross-validation needs 2 <= folds <= {n} items, got {folds}")
    return np.array_split(np.random.default_rng(seed).permutation(n), folds)
