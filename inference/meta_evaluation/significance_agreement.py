"""Clinical significance against RadPref's radiologists, on the items they graded (`meta-eval significance`).

An item is a listed finding (RadPref's `ground_truth_findings` or `C*_findings`) that at least two of the three raters
marked as an error of the candidate (a missing reference finding, or a false candidate finding), each giving it a
clinical significance; its gold level is the level at least two of those raters gave (items where they all differ
are counted and left out). Attribute errors carry no significance level in RadPref and are not items.

Reported: linear-weighted Cohen's kappa of `significance(finding, context)` against the gold levels (the four levels
in order), with its case-bootstrap interval, exact agreement and the confusion table; beside it, each rater against
the level the other two agree on (the ceiling: people given the same items). And whether weighing errors by their
significance should help at all: the raters' own error counts, plain and weighted by CRIMSON's weights from their own
levels (attribute errors 0.5 when significant), against their mean 1-5 rating (Kendall tau-b with case intervals).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..findings.significance import LEVELS, WEIGHTS
from ..scoring.stats import EXACT_95_TAILS, case_bootstrap_taus, case_resamples, percentile_interval
from .radpref import Candidate, case_index


@dataclass
class GradedItem:
    case: int  # index of the case, for the bootstrap
    side: str  # missing (a reference finding) or false (a candidate finding)
    finding: str
    levels: tuple[str | None, str | None, str | None]  # each rater's level (None: not marked)
    context: dict

    def gold(self) -> str | None:
        found = Counter(level for level in self.levels if level)
        level, count = found.most_common(1)[0] if found else (None, 0)
        return level if count >= 2 else None


def graded_items(candidates: Sequence[Candidate]) -> list[GradedItem]:
    cases = case_index(candidates)
    items = []
    for case, candidate in zip(cases, candidates):
        for side, key, listed in (
            ("missing", "missing_findings", candidate.reference_findings),
            ("false", "finding_errors", candidate.findings),
        ):
            marked: dict[int, list[str | None]] = {}
            for rater, label in enumerate(candidate.labels):
                for index, error in label.get(key, {}).items():
                    if side == "false" and error.get("error_type") != "false":
                        continue
                    marked.setdefault(int(index), [None] * len(candidate.labels))[rater] = error.get(
                        "clinical_significance"
                    )
            for index, levels in sorted(marked.items()):
                if sum(level is not None for level in levels) >= 2 and index < len(listed):
                    items.append(GradedItem(int(case), side, listed[index], tuple(levels), candidate.context))
    return items


def weighted_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Linear-weighted Cohen's kappa over the ordered LEVELS (scikit-learn's `cohen_kappa_score(weights="linear")`,
    in numpy): 1 - sum(|i - j| observed) / sum(|i - j| expected by chance); NaN when it is undefined."""
    if len(a) < 2 or len(set(a) | set(b)) < 2:
        return float("nan")
    index = {level: i for i, level in enumerate(LEVELS)}
    observed = np.zeros((len(LEVELS), len(LEVELS)))
    for x, y in zip(a, b):
        if x in index and y in index:
            observed[index[x], index[y]] += 1.0
    if not observed.sum():
        return float("nan")
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    weights = np.abs(np.subtract.outer(np.arange(len(LEVELS)), np.arange(len(LEVELS))))
    chance = (weights * expected).sum()
    return float(1.0 - (weights * observed).sum() / chance) if chance else float("nan")


def confusion(gold: Sequence[str], predicted: Sequence[str]) -> dict:
    return {g: {p: sum(1 for x, y in zip(gold, predicted) if x == g and y == p) for p in LEVELS} for g in LEVELS}


def weighted_label_count(label: dict) -> float:
    """One rater's errors of a candidate weighted as CRIMSON weighs them, from the rater's own levels."""
    total = 0.0
    for error in [*label.get("finding_errors", {}).values(), *label.get("missing_findings", {}).values()]:
        if error.get("clinical_significance"):
            total += WEIGHTS[error["clinical_significance"]]
        else:  # an attribute error: its attributes' severities
            total += sum(0.5 for v in (error.get("attributes") or {}).values() if v == "significant")
    return total


def raters_weighting_check(candidates: Sequence[Candidate], n_bootstrap: int, seed: int) -> dict:
    """Tau-b of minus the raters' mean plain and CRIMSON-weighted error counts against their mean rating."""
    rating = np.array([c.mean_rating() for c in candidates])
    counts = {
        "plain": np.array([c.mean_errors() for c in candidates]),
        "crimson_weighted": np.array([np.mean([weighted_label_count(x) for x in c.labels]) for c in candidates]),
    }
    resamples = case_resamples(case_index(candidates), n_bootstrap, seed)
    return case_bootstrap_taus({name: -values for name, values in counts.items()}, rating, resamples)


def significance_agreement(
    candidates: Sequence[Candidate],
    predict: Callable[[str, dict], str],
    n_bootstrap: int = 1000,
    seed: int = 0,
) -> dict:
    items = graded_items(candidates)
    kept = [item for item in items if item.gold()]
    gold = [item.gold() for item in kept]
    predicted = [predict(item.finding, item.context) for item in kept]
    cases = np.array([item.case for item in kept])
    resamples = case_resamples(cases, n_bootstrap, seed)
    boots = [weighted_kappa([gold[i] for i in idx], [predicted[i] for i in idx]) for idx in resamples]
    boots = [b for b in boots if not np.isnan(b)]
    raters = {}
    for rater in range(3):
        pairs = []
        for item in items:
            others = [level for r, level in enumerate(item.levels) if r != rater]
            if item.levels[rater] and others[0] and others[0] == others[1]:
                pairs.append((item.levels[rater], others[0]))
        raters[f"rater_{rater + 1}_vs_the_other_two"] = {
            "items": len(pairs),
            "weighted_kappa": weighted_kappa([p[0] for p in pairs], [p[1] for p in pairs]),
            "exact": float(np.mean([p[0] == p[1] for p in pairs])) if pairs else float("nan"),
        }
    return {
        "items_marked_by_two_or_more": len(items),
        "items_with_a_majority_level": len(kept),
        "gold_levels": dict(Counter(gold)),
        "weighted_kappa": weighted_kappa(gold, predicted),
        "weighted_kappa_ci95": percentile_interval(boots, EXACT_95_TAILS) if boots else [float("nan"), float("nan")],
        "exact_agreement": float(np.mean([g == p for g, p in zip(gold, predicted)])) if kept else float("nan"),
        "confusion_gold_by_predicted": confusion(gold, predicted),
        "raters": raters,
        "raters_counts_against_their_rating": raters_weighting_check(candidates, n_bootstrap, seed),
        "disagreements": [
            {"finding": item.finding, "side": item.side, "gold": g, "predicted": p}
            for item, g, p in zip(kept, gold, predicted)
            if g != p
        ],
    }
