"""The options several `radmetrics data` subcommands share: the corpus they read and the LLM endpoint they call."""

from __future__ import annotations

import argparse

from ..corpus.corpus_io import SPLIT_METHODS
from ..corpus.selection import CorpusChoice


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_llm_arguments(p: argparse.ArgumentParser, endpoint_required: bool = True) -> None:
    p.add_argument("--endpoint", required=endpoint_required, help="LLM endpoint YAML (see configs/llm/)")
    p.add_argument("--llm-cache", help="SQLite answer cache (default: OUT/llm_cache.sqlite); rerun to resume")
    p.add_argument("--max-reprompts", type=int, default=2, help="re-prompts after an answer that fails validation")
    p.add_argument("--limit", type=int, default=None, help="at most this many items (in input order)")


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kind",
        default="iu_xray",
        choices=["iu_xray", "rexrank", "free_text", "table"],
        help="corpus layout (default: the bundled IU X-ray reports)",
    )
    p.add_argument("--path", help="file or directory of the corpus (default for iu_xray: the bundled copy)")
    p.add_argument("--id-column", default="id", help="table corpora: id column ('' = row number)")
    p.add_argument("--findings-column", default="findings", help="table corpora: findings column")
    p.add_argument("--impression-column", default="impression", help="table corpora: impression column ('' = none)")
    p.add_argument("--text-column", default=None, help="table corpora: one column holding the whole report")
    p.add_argument(
        "--split-by",
        default="text",
        choices=SPLIT_METHODS,
        help=(
            "text: seeded 80/10/10 by normalised report text, so identical reports share a split; "
            "predefined: the corpus' own split (IU: R2Gen), whose overlap with train the stats report"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the text split")


def add_resume_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """--chunk-size and --overwrite of a command that writes its records in chunks and resumes (record_stream.py)."""
    p.add_argument(
        "--chunk-size",
        type=positive_int,
        default=1000,
        help=f"{what} annotated and written together; a rerun after a kill resumes after the last complete chunk",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a finished run, or a run of other inputs or options, in --out (an LLM answer cache is kept)",
    )


def corpus_choice(args: argparse.Namespace) -> CorpusChoice:
    """The corpus the corpus options name."""
    columns = {}
    if args.kind == "table":
        columns = {
            "id_column": args.id_column or None,
            "findings_column": args.findings_column or None,
            "impression_column": args.impression_column or None,
            "text_column": args.text_column,
        }
    return CorpusChoice(args.kind, args.path, columns, args.split_by, args.seed)


def corpus_and_splits(args: argparse.Namespace) -> tuple[list, dict]:
    """The corpus the arguments name, and its split assignment (--split-by, --seed)."""
    return corpus_choice(args).reports_and_splits()


def corpus_provenance(args: argparse.Namespace) -> dict:
    return corpus_choice(args).provenance()
