"""`radmetrics meta-eval ranking`: how each metric orders candidates on the clinical ranking suite."""

from __future__ import annotations

from pathlib import Path

from ...files import atomic
from ...files.json_io import write_json
from ...meta_evaluation.oriented import quality_oriented
from ...meta_evaluation.ranking import load_suite, pairs, ranking_report, ranking_table
from ...scoring.signature import machine, version
from ..score import build_scorer


def run(args) -> int:
    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    cases = load_suite(args.suite)
    references, candidates, ids = pairs(cases)
    result = scorer(references, candidates, ids=ids)
    oriented = {key: [float(v) for v in values] for key, values in quality_oriented(result).items()}
    report = {
        "suite": str(args.suite or "bundled clinical ranking suite"),
        "cases": len(cases),
        "version": version(),
        "machine": machine(),
        "keys": ranking_report(cases, oriented),
        "signatures": result.signatures,
    }
    write_json(out / "ranking.json", report)
    table = ranking_table(report["keys"])
    atomic.write_text(out / "ranking.md", table + "\n")
    print(table)
    return 0
