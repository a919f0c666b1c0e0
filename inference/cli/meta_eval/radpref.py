"""`radmetrics meta-eval radpref`: agreement of every metric with three radiologists on RadPref's development
half."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...files import atomic
from ...files.json_io import write_json
from ...meta_evaluation.oriented import quality_oriented
from ...meta_evaluation.radpref import agreement, case_index, load_radpref, majority_preference, split_candidates
from ...meta_evaluation.tables import agreement_table
from ...scoring.signature import machine
from ..score import build_scorer


def run(args) -> int:
    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    if args.metrics and args.baseline not in {k for spec in scorer.specs for k in spec.keys}:
        scorer = build_scorer(argparse.Namespace(**{**vars(args), "metrics": [*args.metrics, args.baseline]}), out, 0)
    candidates = load_radpref(args.data)
    if args.part != "all":
        candidates = split_candidates(candidates, args.part)
    result = scorer(
        [c.reference for c in candidates],
        [c.text for c in candidates],
        ids=[f"{c.case_id} {c.name}" for c in candidates],
        # for the metrics that read a patient context (CRIMSON), named as CRIMSON's README names them
        context=[{"Age": c.context.get("PatientAge"), "Indication": c.context.get("Indication")} for c in candidates],
    )
    scores = quality_oriented(result)
    cases, preferred = case_index(candidates), majority_preference(candidates)
    human = [c.mean_errors() for c in candidates]
    rating = [-c.mean_rating() for c in candidates]
    command = ["radmetrics meta-eval radpref", f"--part {args.part}"]
    command += [f"--metrics {' '.join(args.metrics)}"] if args.metrics else []
    command += [f"--components {' '.join(args.components)}"] if args.components else []
    report = {
        "command": " ".join([*command, f"--out {args.out}"]),
        "data": str(args.data or "bundled radpref_dev"),
        "part": args.part,
        "candidates": len(candidates),
        "cases": len(candidates) // 2,
        "human": "minus the mean over 3 raters of finding_errors + missing_findings",
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "baseline": args.baseline,
        "metrics_run": {s.name: s.reference for s in scorer.specs},
        "components": {k: str(v) for k, v in scorer.components.items()},
        "machine": machine(),
        "keys": agreement(scores, human, cases, preferred, args.baseline, args.bootstrap, args.seed),
        "keys_vs_rating": {
            key: {k: v for k, v in entry.items() if k != "preference"}
            for key, entry in agreement(
                scores, rating, cases, preferred, args.baseline, args.bootstrap, args.seed
            ).items()
        },
        "signatures": result.signatures,
    }
    write_json(out / "agreement.json", report)
    table = agreement_table(report)
    atomic.write_text(out / "agreement.md", table + "\n")
    print(table)
    return 0
