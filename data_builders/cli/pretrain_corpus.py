"""`radmetrics data pretrain-corpus`: de-duplicated report text as an HF dataset (GREEN stage-1 pretraining)."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_corpus_arguments, corpus_and_splits, corpus_provenance

HELP = "de-duplicated report text as an HF dataset for causal-LM pretraining"


def add_parser(sub) -> None:
    p = sub.add_parser("pretrain-corpus", help=HELP)
    add_corpus_arguments(p)
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..corpus.pretraining import write_pretrain_corpus

    reports, splits = corpus_and_splits(args)
    stats = write_pretrain_corpus(reports, splits, args.out, corpus_provenance(args))
    print(json.dumps(stats, indent=2))
    return 0
