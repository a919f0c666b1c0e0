"""`radmetrics meta-eval findings`: where semantic_green loses agreement on RadPref, stage by stage."""

from __future__ import annotations

import json
from pathlib import Path

from ...files.json_io import write_json
from ...loading.checkpoint import CheckpointError
from ...meta_evaluation.findings_agreement import extractor_named, findings_agreement
from ...meta_evaluation.radpref import load_radpref, split_candidates
from ...meta_evaluation.tables import findings_table
from ...metrics.semantic_green.metric import SemanticGreen
from ...metrics.semantic_green.teacher import SemanticTeacher
from ...models.text_encoder import TextEncoder
from ...scoring.signature import machine, version

GRID_FORMAT = "radmetrics meta-eval findings: --grid takes STATEMENT,CLAUSE pairs, e.g. 0.5,0.9"


def threshold_grid(args) -> list[tuple[float, float]]:
    """--grid's (statement, clause) threshold pairs, checked before anything loads."""
    if args.extractor not in ("rules", "trained") and not Path(args.extractor).exists():
        raise CheckpointError(f"--extractor {args.extractor}: no such export or run directory (or: trained, rules)")
    try:
        grid = [tuple(float(v) for v in item.split(",")) for item in args.grid or []]
    except ValueError:
        raise SystemExit(GRID_FORMAT) from None
    if any(len(pair) != 2 for pair in grid):
        raise SystemExit(GRID_FORMAT)
    if (grid or args.hedged) and args.extractor == "rules":
        raise SystemExit("radmetrics meta-eval findings: --grid and --hedged need a trained extractor, not rules")
    return grid


def run(args) -> int:
    grid = threshold_grid(args)
    encoder = TextEncoder("default")
    extract = extractor_named(args.extractor, encoder)
    read = (lambda texts: extract(texts, hedged=True)) if args.hedged else extract
    candidates = split_candidates(load_radpref(), args.part)
    findings_rules = SemanticGreen(findings="extractor").teacher(encoder).rules  # the judge semantic_green runs

    def measure(n_bootstrap: int) -> dict:
        return findings_agreement(
            candidates,
            SemanticTeacher(encoder),
            SemanticTeacher(encoder, findings_rules),
            encoder,
            read,
            n_bootstrap,
            args.seed,
            extended=args.hedged,
        )

    report = measure(args.bootstrap)
    points = []
    for statement_threshold, clause_threshold in grid:
        extract.head.statement_threshold, extract.head.clause_threshold = statement_threshold, clause_threshold
        point = measure(0)
        points.append(
            {
                "statement_threshold": extract.head.statement_threshold,
                "clause_threshold": extract.head.clause_threshold,
                "extraction_f1": point["extraction"]["f1"],
                "extraction_precision": point["extraction"]["precision"],
                "extraction_recall": point["extraction"]["recall"],
                "tau_b_extracted_findings": point["report_tau_b"]["extracted_findings"]["tau_b"],
            }
        )
        print(json.dumps(points[-1]))
    report = {
        "part": args.part,
        "extractor": args.extractor,
        "version": version(),
        "machine": machine(),
        "command": f"radmetrics meta-eval findings --part {args.part} --extractor {args.extractor}"
        + (" --hedged" if args.hedged else "")
        + (f" --grid {' '.join(args.grid)}" if args.grid else ""),
        **report,
        **({"threshold_grid": points} if points else {}),
    }
    write_json(Path(args.out) / "findings_agreement.json", report)
    print(findings_table(report))
    return 0
