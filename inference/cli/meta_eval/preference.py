"""`radmetrics meta-eval preference`: accuracy of metrics at picking the candidate radiologists preferred."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...files.json_io import write_json
from ...files.judgement_files import preference_vote, read_rows
from ...meta_evaluation.preference import preference_report
from ...meta_evaluation.tables import preference_table
from ..score import build_scorer


def run(args) -> int:
    first, second = args.candidate_columns
    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    rows = read_rows(args.csv, [args.reference_column, first, second, *args.preferred_columns])
    raters = {c: np.array([preference_vote(r[c], args.csv, line) for line, r in rows]) for c in args.preferred_columns}
    refs = [r[args.reference_column] for _, r in rows]
    result = scorer(
        refs + refs,
        [r[first] for _, r in rows] + [r[second] for _, r in rows],
        ids=[f"line {line} {c}" for c in (first, second) for line, _ in rows],
    )
    report = {
        "n_pairs": len(rows),
        "raters": list(raters),
        "ties": args.ties,
        **preference_report(result, raters, args.ties, args.bootstrap, args.seed),
        "signatures": result.signatures,
    }
    write_json(out / "preference_accuracy.json", report)
    print(preference_table(report))
    return 0
