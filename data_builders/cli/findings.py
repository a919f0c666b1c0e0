"""`radmetrics data findings`: silver finding labels of the IU X-ray statements and clauses (MeSH codes)."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

HELP = "silver finding labels of statements and clauses (IU X-ray MeSH codes)"


def add_parser(sub) -> None:
    p = sub.add_parser("findings", help=HELP)
    p.add_argument("--corpus-csv", help="an IU X-ray CSV with uid, MeSH, findings, impression (default: bundled)")
    p.add_argument("--max-reports", type=int, help="the first N reports only")
    p.add_argument("--positive-at", type=float, default=0.5, help="cosine with a MeSH code that makes a finding")
    p.add_argument("--negative-below", type=float, default=0.35, help="cosine under which it is not one")
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.models.text_encoder import TextEncoder

    from ..extractor_labels import FindingsSilverArguments, build_findings_silver

    options = FindingsSilverArguments(args.corpus_csv, args.max_reports, args.positive_at, args.negative_below)
    splits = build_findings_silver(options, TextEncoder("default"), args.out)
    print(json.dumps({name: len(rows) for name, rows in splits.items()}, indent=2))
    return 0
