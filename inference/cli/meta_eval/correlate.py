"""`radmetrics meta-eval correlate`: Kendall tau of metrics against human judgements in a CSV."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...files.json_io import write_json
from ...files.judgement_files import number_column, read_rows
from ...files.report_html import write_figures_report
from ...loading.extras import require
from ...meta_evaluation.correlation import correlation_report
from ...meta_evaluation.plots import scatter
from ...meta_evaluation.tables import correlation_table, interval
from ..score import build_scorer


def run(args) -> int:
    require("matplotlib", extra="train", for_what="radmetrics meta-eval correlate (its scatter plots)")
    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    rows = read_rows(args.csv, [args.reference_column, args.candidate_column, *args.human_columns])
    sign = -1.0 if args.human_higher_is_better else 1.0
    raters = {c: np.array(number_column(rows, c, args.csv)) * sign for c in args.human_columns}
    result = scorer(
        [r[args.reference_column] for _, r in rows],
        [r[args.candidate_column] for _, r in rows],
        ids=[f"line {line}" for line, _ in rows],
    )
    computed = correlation_report(result, raters, args.bootstrap, args.seed)
    out.mkdir(parents=True, exist_ok=True)
    mean = np.mean(list(raters.values()), axis=0)
    for key, entry in computed["metrics"].items():
        tau = entry["mean_of_raters"]
        title = f"{key}: tau-b {tau['tau_b']:.3f} {interval(tau['ci95'])}, n={tau['n']}"
        scatter(entry.pop("predicted_errors"), mean, key, out / f"scatter_{key}.png", title)
    report = {
        "n_pairs": len(rows),
        "raters": list(raters),
        "human_orientation": "higher is better" if args.human_higher_is_better else "error counts (lower is better)",
        **computed,
        "signatures": result.signatures,
    }
    write_json(out / "kendall_tau.json", report)
    write_figures_report(
        out,
        "radmetrics meta-eval: agreement with radiologists",
        f"{len(rows)} pairs; Kendall tau-b of each score (oriented so that higher means more errors) against the "
        "mean of the raters, with its 95% bootstrap interval.",
        [
            (
                f"{key}: tau-b {e['mean_of_raters']['tau_b']:.3f} {interval(e['mean_of_raters']['ci95'])}",
                out / f"scatter_{key}.png",
            )
            for key, e in report["metrics"].items()
        ],
    )
    print(correlation_table(report))
    return 0
