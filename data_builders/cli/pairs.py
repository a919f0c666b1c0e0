"""`radmetrics data pairs`: report pairs by the GREEN heuristics with edit logs and teacher annotations, resumable by
chunks (pairs/pairs_run.py)."""

from __future__ import annotations

import argparse
import json
import sys

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_corpus_arguments, add_resume_arguments, corpus_choice

HELP = "build report pairs with edit logs and programmatic GREEN annotations"


def add_parser(sub) -> None:
    p = sub.add_parser("pairs", help=HELP)
    add_corpus_arguments(p)
    p.add_argument(
        "--heuristics",
        nargs="+",
        default=None,
        help="subset of: random remove_shuffle nearest_neighbour radgraph_permute recombine (default: all)",
    )
    p.add_argument("--per-heuristic", type=int, default=None, help="pairs per heuristic (default: one per reference)")
    p.add_argument("--sentence-splitter", default="robust", choices=["robust", "fineradscore"])
    p.add_argument(
        "--encoder", default="default", help="encoder for nearest-neighbour pairing (default: bundled MiniLM)"
    )
    p.add_argument(
        "--teacher",
        default="programmatic",
        choices=["programmatic", "semantic"],
        help=(
            "who annotates: programmatic (each pair's edit log) or semantic (the semantic_green teacher, "
            "from the two texts alone)"
        ),
    )
    p.add_argument(
        "--explanation",
        default=None,
        choices=["summary", "walkthrough"],
        help=(
            "the teacher's [Explanation]: summary (the counts only; the semantic teacher then quotes each statement's "
            "first words) or walkthrough (each statement's verdict, then the counts). Default: walkthrough for the "
            "semantic teacher, summary for the programmatic one"
        ),
    )
    p.add_argument(
        "--units",
        choices=["findings", "statements"],
        default="findings",
        help=(
            "what the semantic teacher judges: findings (each report's findings as the findings extractor lists "
            "them, as semantic_green does; for the `findings` prompt) or statements (every statement; `numbered`)"
        ),
    )
    add_resume_arguments(p, "pairs")
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..pairs.pairs_run import PairsRequest, pairs_into_folder

    request = PairsRequest(
        corpus_choice(args),
        args.out,
        args.heuristics,
        args.per_heuristic,
        args.sentence_splitter,
        args.encoder,
        args.teacher,
        args.explanation,
        args.units,
        args.chunk_size,
        args.overwrite,
        report=lambda line: print(line, file=sys.stderr, flush=True),
    )
    stats = pairs_into_folder(request)
    print(json.dumps({k: stats[k] for k in ("pairs", "per_heuristic", "per_split")}, indent=2))
    return 0
