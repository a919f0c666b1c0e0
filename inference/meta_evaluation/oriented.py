"""Scores put one way round, so that agreement with people reads the same for every metric."""

from __future__ import annotations

import numpy as np


def quality_oriented(result) -> dict[str, np.ndarray]:
    """Per score key of a ScoreResult, its per-sample values with higher meaning better (NaN where unscored)."""
    oriented = {}
    for key in result.summary:
        values = np.array([np.nan if row[key] is None else row[key] for row in result.per_sample], dtype=float)
        oriented[key] = values if result.higher_is_better[key] else -values
    return oriented
