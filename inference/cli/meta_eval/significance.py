"""`radmetrics meta-eval significance`: radmetrics' clinical significance per finding against RadPref's raters."""

from __future__ import annotations

from pathlib import Path

from ...files.json_io import write_json
from ...findings.significance import significance as level_of
from ...meta_evaluation.radpref import load_radpref, split_candidates
from ...meta_evaluation.significance_agreement import significance_agreement
from ...scoring.signature import machine, version


def run(args) -> int:
    candidates = split_candidates(load_radpref(), args.part)
    report = {
        "command": f"radmetrics meta-eval significance --part {args.part} --out {args.out}",
        "part": args.part,
        "cases": len(candidates) // 2,
        "radmetrics": version(),
        "machine": machine(),
        "predictor": "inference/findings/significance.py (word rules from CRIMSON's examples, the patient's age)",
        **significance_agreement(candidates, level_of, args.bootstrap, args.seed),
    }
    write_json(Path(args.out) / "significance_agreement.json", report)
    low, high = report["weighted_kappa_ci95"]
    raters = ", ".join(f"{v['weighted_kappa']:.3f}" for v in report["raters"].values())
    print(
        f"{report['items_with_a_majority_level']} items: weighted kappa {report['weighted_kappa']:.3f} "
        f"[{low:.3f}, {high:.3f}], exact {report['exact_agreement']:.3f}; each rater against the other two: {raters}"
    )
    return 0
