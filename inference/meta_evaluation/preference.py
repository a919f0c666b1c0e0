"""Preference accuracy: how often a metric picks the candidate radiologists preferred (GREEN paper section 4.3.2;
`radmetrics meta-eval preference`)."""

from __future__ import annotations

import numpy as np

from ..scoring.stats import picks, preference_accuracy
from .oriented import quality_oriented


def majority_vote(votes: np.ndarray) -> np.ndarray:
    """Per pair, the candidate (1 or 2) more raters preferred; 0 for a tie or no majority. `votes`: raters x pairs."""
    ones, twos = (votes == 1).sum(0), (votes == 2).sum(0)
    return np.where(ones > twos, 1, np.where(twos > ones, 2, 0))


def preference_report(result, raters: dict[str, np.ndarray], ties: str, bootstrap: int, seed: int) -> dict:
    """`result` scored the n first candidates, then the n second ones; each rater's votes are 1, 2 or 0 per pair."""
    majority = majority_vote(np.stack(list(raters.values())))
    n = len(majority)
    report: dict = {"metrics": {}}
    for key, oriented in quality_oriented(result).items():
        a, b = oriented[:n], oriented[n:]
        picked = picks(a, b)
        entry = {
            "higher_is_better": result.higher_is_better[key],
            "majority": preference_accuracy(picked, majority, ties, bootstrap, seed),
        }
        if len(raters) > 1:
            entry["per_rater"] = {
                name: preference_accuracy(picked, votes, ties, bootstrap, seed) for name, votes in raters.items()
            }
        report["metrics"][key] = entry
    if len(raters) > 1:
        names = list(raters)
        report["inter_rater"] = {
            f"{x} vs {y}": preference_accuracy(raters[x], raters[y], "skip", bootstrap, seed)
            for i, x in enumerate(names)
            for y in names[i + 1 :]
        }
    return report
