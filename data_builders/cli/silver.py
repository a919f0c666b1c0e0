"""`radmetrics data silver`: silver CheXpert / RaTE-NER / RadGraph labels with a dataset card."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_corpus_arguments, corpus_and_splits, corpus_provenance

HELP = "silver CheXpert / RaTE-NER / RadGraph labels with a dataset card"
LABELERS = ("chexpert", "rate_ner", "radgraph")


def add_parser(sub) -> None:
    p = sub.add_parser("silver", help=HELP)
    add_corpus_arguments(p)
    p.add_argument(
        "--labelers",
        nargs="+",
        default=list(LABELERS),
        choices=LABELERS,
        help="which silver labels to build (default: all)",
    )
    p.add_argument("--sentence-splitter", default="robust", choices=["robust", "fineradscore"])
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..silver.dataset import write_silver

    reports, splits = corpus_and_splits(args)
    stats = write_silver(reports, splits, args.out, args.labelers, corpus_provenance(args), args.sentence_splitter)
    print(json.dumps({name: s["records_per_split"] for name, s in stats["labelers"].items()}, indent=2))
    print(f"dataset card: {args.out}/README.md")
    return 0
