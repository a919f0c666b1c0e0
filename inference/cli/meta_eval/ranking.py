"""`radmetrics meta-eval ranking`: how each metric orders candidates on the clinical ranking suite."""

from __future__ import annotations

from ...files.atomic import write_text
from ...files.json_io import dumps
from ...files.output_paths import ensure_output_dir
from ...meta_evaluation.oriented import quality_oriented
from ...meta_evaluation.ranking import load_suite, pairs, ranking_report, ranking_table
from ...metrics.base import OptionError
from ...scoring.signature import machine, version
from ..score import build_scorer


def run(args) -> int:
    if args.bootstrap < 0:
        raise OptionError(f"--bootstrap {args.bootstrap}: give 0 (no intervals) or more case resamples")
    out = ensure_output_dir(args.out)  # before any model loads
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
        "bootstrap": {"resamples": args.bootstrap, "seed": args.seed, "unit": "case"},
        "keys": ranking_report(cases, oriented, args.bootstrap, args.seed),
        "signatures": result.signatures,
    }
    write_text(out / "ranking.json", dumps(report, indent=2))
    table = ranking_table(report["keys"])
    write_text(out / "ranking.md", table + "\n")
    print(table)
    return 0
