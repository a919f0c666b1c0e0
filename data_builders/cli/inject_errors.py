"""`radmetrics data inject-errors`: LLM-written candidates with sampled GREEN error categories (appendix A.4)."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_corpus_arguments, add_llm_arguments, corpus_choice

HELP = "LLM-written candidates with sampled GREEN error categories (appendix A.4)"


def add_parser(sub) -> None:
    p = sub.add_parser("inject-errors", help=HELP)
    add_corpus_arguments(p)
    add_llm_arguments(p)
    p.add_argument("--max-errors", type=int, default=3, help="at most this many error categories per candidate")
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def run(args: argparse.Namespace) -> int:
    from ..pairs.injection_run import inject_into_folder

    summary = inject_into_folder(
        corpus_choice(args), args.out, args.endpoint, args.llm_cache, args.max_reprompts, args.limit, args.max_errors
    )
    print(json.dumps(summary, indent=2))
    return 0
