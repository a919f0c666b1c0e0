"""RadPref's development half (CRIMSON, rajpurkarlab/CRIMSON `RadPref/`): radiologists' error labels on candidate
reports, and how well a metric agrees with them.

50 chest X-ray cases, each a ground-truth report and two candidates (`C1`, `C2`), labelled by three board-certified
radiologists: per candidate finding an error (`false`, or `attribute` with e.g. `{"location": "significant"}`) with
its clinical significance, per ground-truth finding whether the candidate misses it, and a 1-5 rating. The other 50
cases are held out by the project and never shipped (resources/ATTRIBUTION.md).

Agreement, as `radmetrics meta-eval radpref` reports it for every metric:
- Kendall tau-b between the metric (oriented so that higher is better) and minus the radiologists' mean error count
  (`finding_errors` + `missing_findings`), over the 100 candidates; its 95% bootstrap interval resamples the 50 cases,
  a case's two candidates together, since they share a reference;
- the paired bootstrap difference of tau-b against a baseline metric (ROUGE-L), on the same resampled cases;
- preference accuracy: on each case where at least 2 of the 3 raters rate one candidate higher than the other, whether
  the metric scores it higher too (a metric's tie counts half).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import numpy as np

from ..scoring.stats import case_bootstrap_taus, case_resamples, picks, preference_accuracy

CANDIDATES = ("C1", "C2")
SPLIT_SEED = 52  # the seed of the frozen split of the 50 cases: 30 to develop on, 20 touched once
SPLIT_SIZES = {"develop": 30, "frozen": 20}
SPLIT_FILE = "radpref_dev_split.json"
SIGNIFICANT_LEVELS = ("urgent", "actionable_not_urgent")
RATERS = ("user_1", "user_2", "user_3")
CONTEXT_FIELDS = ("Indication", "Comparison", "PatientAge", "PatientSex", "StudyDescription")


def default_folder() -> Path:
    return Path(str(files("radmetrics.inference").joinpath("resources", "radpref_dev")))


@dataclass
class Candidate:
    """One candidate report with each rater's labels of it."""

    case_id: str
    name: str  # C1 or C2
    reference: str
    text: str
    labels: list[dict] = field(default_factory=list)  # per rater: finding_errors, missing_findings, rating
    reference_findings: list[str] = field(default_factory=list)  # RadPref's ground_truth_findings
    findings: list[str] = field(default_factory=list)  # RadPref's C*_findings, indexed by finding_errors
    context: dict = field(default_factory=dict)  # Indication, Comparison, PatientAge, PatientSex, StudyDescription

    def errors(self, rater: int) -> int:
        label = self.labels[rater]
        return len(label.get("finding_errors", {})) + len(label.get("missing_findings", {}))

    def mean_errors(self) -> float:
        return float(np.mean([self.errors(r) for r in range(len(self.labels))]))

    def mean_rating(self) -> float:
        """The raters' mean overall rating (1-5, higher is better)."""
        return float(np.mean([label["rating"] for label in self.labels if label.get("rating") is not None]))

    def mean_count(self, which: str) -> float:
        """The raters' mean count of one kind of label: false, attribute, location, severity, missing, significant."""
        return float(np.mean([count_labels(label, which) for label in self.labels]))


def is_significant(error: dict) -> bool:
    """A rater's error is significant when its clinical significance is urgent or actionable, or an attribute of it is
    marked significant."""
    if error.get("clinical_significance") in SIGNIFICANT_LEVELS:
        return True
    return any(value == "significant" for value in (error.get("attributes") or {}).values())


def count_labels(label: dict, which: str) -> int:
    errors = list(label.get("finding_errors", {}).values())
    missing = list(label.get("missing_findings", {}).values())
    if which == "false":
        return sum(e.get("error_type") == "false" for e in errors)
    if which == "attribute":
        return sum(e.get("error_type") == "attribute" for e in errors)
    if which in ("location", "severity", "measurement"):
        return sum(which in (e.get("attributes") or {}) for e in errors)
    if which == "missing":
        return len(missing)
    if which == "significant":
        return sum(map(is_significant, errors + missing))
    if which == "all":
        return len(errors) + len(missing)
    raise ValueError(f"unknown label kind {which!r}")


def load_radpref(folder: str | Path | None = None) -> list[Candidate]:
    """The candidates in case order, C1 then C2 of each case."""
    folder = Path(folder) if folder else default_folder()
    cases = json.loads((folder / "preference_data.json").read_text(encoding="utf-8"))
    raters = [json.loads((folder / f"{rater}.json").read_text(encoding="utf-8"))["annotations"] for rater in RATERS]
    candidates = []
    for case in cases:
        for name in CANDIDATES:
            labels = [annotations[case["id"]][name] for annotations in raters]
            candidates.append(
                Candidate(
                    case["id"],
                    name,
                    case["ground_truth_report"],
                    case[f"{name}_report"],
                    labels,
                    list(case.get("ground_truth_findings") or []),
                    list(case.get(f"{name}_findings") or []),
                    {k: case[k] for k in CONTEXT_FIELDS if k in case},
                )
            )
    return candidates


def draw_split(case_ids: list[str], seed: int = SPLIT_SEED) -> dict[str, list[str]]:
    """The frozen split of radpref_dev's cases: a seeded permutation of the sorted case ids, the first 30 to develop
    on (every rule, threshold, model and feature is chosen on them, inside case-level cross-validation where it is a
    fitted value) and the last 20 touched once, at the end, for the final figures."""
    order = np.random.default_rng(seed).permutation(sorted(case_ids))
    develop = SPLIT_SIZES["develop"]
    return {"develop": sorted(map(str, order[:develop])), "frozen": sorted(map(str, order[develop:]))}


def load_split() -> dict[str, list[str]]:
    """The committed split (resources/radpref_dev_split.json): {"develop": [30 case ids], "frozen": [20 case ids]}."""
    path = Path(str(files("radmetrics.inference").joinpath("resources", SPLIT_FILE)))
    data = json.loads(path.read_text(encoding="utf-8"))
    return {part: list(data[part]) for part in SPLIT_SIZES}


def split_candidates(candidates: list[Candidate], part: str) -> list[Candidate]:
    """The candidates of one part of the frozen split ("develop", "frozen" or "all"), in case order."""
    if part == "all":
        return list(candidates)
    if part not in SPLIT_SIZES:
        raise ValueError(f"radpref split part {part!r}: expected develop, frozen or all")
    keep = set(load_split()[part])
    return [c for c in candidates if c.case_id in keep]


def case_index(candidates: list[Candidate]) -> np.ndarray:
    """For each candidate, the index of its case."""
    ids = list(dict.fromkeys(c.case_id for c in candidates))
    return np.array([ids.index(c.case_id) for c in candidates])


def majority_preference(candidates: list[Candidate]) -> np.ndarray:
    """Per case: 1 or 2 when at least 2 of the 3 raters rate that candidate higher, else 0."""
    cases = len(candidates) // 2
    votes = np.zeros((cases, 2), dtype=int)
    for case in range(cases):
        first, second = candidates[2 * case], candidates[2 * case + 1]
        for rater in range(len(first.labels)):
            a, b = first.labels[rater].get("rating"), second.labels[rater].get("rating")
            if a is not None and b is not None and a != b:
                votes[case, 0 if a > b else 1] += 1
    return np.where(votes[:, 0] >= 2, 1, np.where(votes[:, 1] >= 2, 2, 0))


def agreement(
    scores: dict[str, np.ndarray],
    human_errors: np.ndarray,
    cases: np.ndarray,
    preferred: np.ndarray,
    baseline: str | None = "rougeL",
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict:
    """Per key (scores oriented higher = better): tau-b with its case-bootstrap interval, the paired difference with
    `baseline`, and the preference accuracy."""
    target = -np.asarray(human_errors, dtype=float)
    taus = case_bootstrap_taus(scores, target, case_resamples(cases, n_resamples, seed), baseline)
    report = {}
    for key, values in scores.items():
        tau, vs_baseline = taus[key], {k: v for k, v in taus[key].items() if k.startswith("vs_")}
        report[key] = {
            "tau_b": tau["tau_b"],
            "ci95": tau["ci95"],
            "n": int((~np.isnan(values)).sum()),
            **vs_baseline,
            "preference": candidate_preference(values, preferred),
        }
    return report


def candidate_preference(values: np.ndarray, preferred: np.ndarray) -> dict:
    """`preference_accuracy` of the metric's pick (the higher of C1 and C2, ties half) on the cases with a
    majority preference (a case the metric could not score left out): its accuracy, cases and metric ties."""
    result = preference_accuracy(picks(values[0::2], values[1::2]), preferred, "half", 0, 0)
    return {name: result[name] for name in ("accuracy", "n", "metric_ties")}
