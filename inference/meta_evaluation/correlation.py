"""Kendall tau between metrics and human judgements, per rater and against the raters' mean, beside the inter-rater
baseline (`radmetrics meta-eval correlate`). Scores and human columns are compared as error counts (higher = more
errors), so a positive tau means agreement, as in the RadCliQ paper's Table 4."""

from __future__ import annotations

import numpy as np

from ..scoring.stats import kendall_tau
from .oriented import quality_oriented


def tau_b_and_c(x, y, bootstrap: int, seed: int) -> dict:
    """tau-b with its interval and p-value (ci95, p_value), and tau-c with its own (tau_c_ci95, tau_c_p_value)."""
    tau_c = kendall_tau(x, y, "c", bootstrap, seed)
    return {
        **kendall_tau(x, y, "b", bootstrap, seed),
        "tau_c": tau_c["tau_c"],
        "tau_c_ci95": tau_c["ci95"],
        "tau_c_p_value": tau_c["p_value"],
    }


def correlation_report(result, raters: dict[str, np.ndarray], bootstrap: int, seed: int) -> dict:
    """{"metrics": {key: {higher_is_better, mean_of_raters, per_rater?, predicted_errors}}, "inter_rater"?}: each
    rater's column holds error counts; `predicted_errors` (the metric's values, error-oriented) is for plotting."""
    mean = np.mean(list(raters.values()), axis=0)
    report: dict = {"metrics": {}}
    for key, quality in quality_oriented(result).items():
        predicted_errors = -quality
        entry = {
            "higher_is_better": result.higher_is_better[key],
            "mean_of_raters": tau_b_and_c(predicted_errors, mean, bootstrap, seed),
        }
        if len(raters) > 1:
            entry["per_rater"] = {
                name: tau_b_and_c(predicted_errors, values, bootstrap, seed) for name, values in raters.items()
            }
        report["metrics"][key] = entry | {"predicted_errors": predicted_errors}
    if len(raters) > 1:
        names = list(raters)
        others = {n: np.mean([raters[m] for m in names if m != n], axis=0) for n in names}
        report["inter_rater"] = {
            "rater_vs_mean_of_others": {n: tau_b_and_c(raters[n], others[n], bootstrap, seed) for n in names},
            "rater_pairs": {
                f"{a} vs {b}": tau_b_and_c(raters[a], raters[b], bootstrap, seed)
                for i, a in enumerate(names)
                for b in names[i + 1 :]
            },
        }
    return report
