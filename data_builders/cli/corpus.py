"""`radmetrics data corpus`: load a corpus and write reports.jsonl with its splits."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_corpus_arguments, corpus_and_splits

HELP = "load a corpus and write reports.jsonl with splits"


def add_parser(sub) -> None:
    p = sub.add_parser("corpus", help=HELP)
    add_corpus_arguments(p)
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..corpus.corpus_io import write_corpus

    stats = write_corpus(*corpus_and_splits(args), args.out)
    print(json.dumps(stats, indent=2))
    return 0
