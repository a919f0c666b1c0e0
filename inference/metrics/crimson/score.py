"""CRIMSON's score from one evaluation, as crimson-score 0.2.0 computes it (`CRIMSONScore._calculate_crimson`).

Findings weigh by clinical significance (urgent 1, actionable not urgent 0.5, not actionable not urgent 0.25,
benign/expected 0; any other or missing label 0.25), attribute errors by severity (significant 0.5, negligible 0; any
other 0.25). E_false sums the false findings' weights (an unknown id weighs 0; a repeated id counts again), N_G the
reference findings' (the number of matched pairs when the list is empty). A matched reference finding earns its
weight, times w / (w + its attribute errors' weights) when it has any (each reference id once). S = (correct -
E_false) / N_G (when N_G is 0: 1 with no false or missing weight, else -(E_false + E_miss + 1)); the score is S when
S >= 0, else -x / (1 + x) with x = E_false - correct: in (-1, 1], 0 for a candidate with no findings, rounded to 4
places (so it reaches -1.0 past about 20,000 false weight, as the reference's does). The missing findings' list enters
the score only through N_G == 0; otherwise a reference finding that is not matched costs its weight in N_G.
A malformed evaluation (a finding without "id", a match without "ref_id", an id that is not text) raises, as the
reference's does.
"""

from __future__ import annotations

SIGNIFICANCE_WEIGHTS = {
    "urgent": 1.0,
    "actionable_not_urgent": 0.5,
    "not_actionable_not_urgent": 0.25,
    "benign_expected": 0.0,
}
ATTRIBUTE_SEVERITY_WEIGHTS = {"significant": 0.5, "negligible": 0.0}
UNKNOWN_WEIGHT = 0.25
ERROR_TYPES = (
    "location",
    "severity",
    "descriptor",
    "measurement",
    "certainty",
    "unspecific",
    "overinterpretation",
    "temporal",
)


def _weight(item: dict, weights: dict, key: str) -> float:
    return weights.get(item.get(key, ""), UNKNOWN_WEIGHT)


def crimson_score(evaluation: dict) -> dict:
    """{"crimson_score", "error_counts", "weighted_error_counts", "metrics", "matched_findings"} of one evaluation."""
    errors = evaluation.get("errors", {})
    matched = evaluation.get("matched_findings", [])
    references = evaluation.get("reference_findings", [])
    predictions = evaluation.get("predicted_findings", [])
    reference_weight = {r["id"]: _weight(r, SIGNIFICANCE_WEIGHTS, "clinical_significance") for r in references}
    prediction_weight = {p["id"]: _weight(p, SIGNIFICANCE_WEIGHTS, "clinical_significance") for p in predictions}
    e_false = sum(prediction_weight.get(i, 0.0) for i in errors.get("false_findings", []))
    e_miss = sum(reference_weight.get(i, 0.0) for i in errors.get("missing_findings", []))
    attribute_errors = errors.get("attribute_errors", [])
    by_reference: dict = {}
    for error in attribute_errors:
        by_reference.setdefault(error["ref_id"], []).append(error)
    n_g = sum(_weight(r, SIGNIFICANCE_WEIGHTS, "clinical_significance") for r in references)
    if n_g == 0 and not references:
        n_g = len(matched) + e_miss
    counted, correct = set(), 0.0
    for match in matched:
        ref_id = match["ref_id"]
        if ref_id in counted:
            continue
        counted.add(ref_id)
        base = reference_weight.get(ref_id, 0.0)
        found = by_reference.get(ref_id, [])
        if not found:
            correct += base
        else:
            penalty = sum(_weight(e, ATTRIBUTE_SEVERITY_WEIGHTS, "severity") for e in found)
            correct += base * (base / (base + penalty) if base + penalty > 0 else 0.0)
    excess = e_false - correct
    if n_g == 0:
        s = 1.0 if e_false == 0 and e_miss == 0 else -(e_false + e_miss + 1)
    else:
        s = (correct - e_false) / n_g
    score = s if s >= 0 else (-excess / (1 + excess) if excess > 0 else 0)
    return {
        "crimson_score": round(score, 4),
        "error_counts": {
            "false_findings": len(errors.get("false_findings", [])),
            "missing_findings": len(errors.get("missing_findings", [])),
            "attribute_errors": len(attribute_errors),
            **{f"{t}_errors": sum(1 for e in attribute_errors if t in e.get("error_types", [])) for t in ERROR_TYPES},
        },
        "weighted_error_counts": {
            "false_findings": e_false,
            "missing_findings": e_miss,
            "attribute_errors": sum(_weight(e, ATTRIBUTE_SEVERITY_WEIGHTS, "severity") for e in attribute_errors),
        },
        "metrics": {"N_G": n_g, "E_penalty": e_false, "correct": correct, "errors_more_than_correct": excess, "S": s},
        "matched_findings": len(counted),
    }
