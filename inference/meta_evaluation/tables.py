"""The Markdown tables `radmetrics meta-eval` prints for its reports."""

from __future__ import annotations

import numpy as np


def number(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def interval(bounds) -> str:
    return "n/a" if any(b is None or b != b for b in bounds) else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def correlation_table(report: dict) -> str:
    lines = ["| score | tau-b vs mean of raters | 95% CI | tau-c | n |", "|---|---|---|---|---|"]
    for key, entry in report["metrics"].items():
        m = entry["mean_of_raters"]
        lines.append(f"| {key} | {m['tau_b']:.3f} | {interval(m['ci95'])} | {m['tau_c']:.3f} | {m['n']} |")
    for name, value in report.get("inter_rater", {}).get("rater_vs_mean_of_others", {}).items():
        lines.append(
            f"| inter-rater: {name} vs the others | {value['tau_b']:.3f} | {interval(value['ci95'])} |"
            f" {value['tau_c']:.3f} | {value['n']} |"
        )
    return "\n".join(lines)


def preference_table(report: dict) -> str:
    lines = [
        "| score | accuracy vs majority | 95% CI | metric ties | unscorable (left out) | n |",
        "|---|---|---|---|---|---|",
    ]
    for key, entry in report["metrics"].items():
        m = entry["majority"]
        lines.append(
            f"| {key} | {number(m['accuracy'])} | {interval(m['ci95'])} | {m['metric_ties']} |"
            f" {m['unscorable_left_out']} | {m['n']} |"
        )
    for pair, value in report.get("inter_rater", {}).items():
        lines.append(
            f"| inter-rater: {pair} | {number(value['accuracy'])} | {interval(value['ci95'])} | | | {value['n']} |"
        )
    return "\n".join(lines)


def agreement_table(report: dict) -> str:
    """RadPref agreement per score key, best tau-b first, with the paired difference to the baseline key."""
    baseline = report["baseline"]
    lines = [
        f"| score | tau-b | 95% CI (cases) | tau-b - {baseline} [95% CI] | preference accuracy (n) |",
        "|---|---|---|---|---|",
    ]
    ordered = sorted(report["keys"].items(), key=lambda item: -np.nan_to_num(item[1]["tau_b"], nan=-2.0))
    for key, entry in ordered:
        versus = entry.get(f"vs_{baseline}")
        difference = ""
        if versus:
            difference = (
                "n/a"
                if np.isnan(versus["difference"])
                else f"{versus['difference']:+.3f} [{versus['ci95'][0]:+.3f}, {versus['ci95'][1]:+.3f}]"
            )
        preference = entry["preference"]
        lines.append(
            f"| {key} | {number(entry['tau_b'])} | {interval(entry['ci95'])} | {difference} | "
            f"{number(preference['accuracy'])} ({preference['n']}) |"
        )
    return "\n".join(lines)


def findings_table(report: dict) -> str:
    """Finding-level agreement, stage by stage: extraction, the judge on the listed findings, report-level tau-b."""
    extraction, judge, taus = report["extraction"], report["judge_on_listed_findings"], report["report_tau_b"]
    lines = [
        f"RadPref {report['part']} ({report['cases']} cases), extractor {report['extractor']}",
        f"extraction: precision {extraction['precision']:.3f}, recall {extraction['recall']:.3f}, "
        f"F1 {extraction['f1']:.3f} ({extraction['recovered']} of {extraction['listed']} listed findings)",
    ]
    for kind in ("false", "missing"):
        entry = judge[kind]["judge_vs_majority"]
        raters = [r["f1"] for r in judge[kind]["raters"].values()]
        lines.append(
            f"judge on listed findings, {kind}: F1 {entry['f1']:.3f}, kappa {entry['kappa']:.3f} "
            f"(rater vs rater F1 {min(raters):.3f}-{max(raters):.3f})"
        )
    for way, entry in taus.items():
        versus = next((v for k, v in entry.items() if k.startswith("vs_")), None)
        extra = f", {versus['difference']:+.3f} {interval(versus['ci95'])} vs statements" if versus else ""
        lines.append(f"tau-b on {way.replace('_', ' ')}: {entry['tau_b']:.3f} {interval(entry['ci95'])}{extra}")
    return "\n".join(lines)
