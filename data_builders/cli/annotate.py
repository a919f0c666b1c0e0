"""`radmetrics data annotate`: GREEN (or CRIMSON) annotations of any pairs by the semantic, an LLM or the programmatic
teacher, resumable by chunks (pairs/annotation_run.py)."""

from __future__ import annotations

import argparse
import json
import sys

from radmetrics.inference.files.output_paths import OutputFolder

from .arguments import add_llm_arguments, add_resume_arguments

HELP = "GREEN annotations of any pairs by the semantic or an LLM teacher"


def add_parser(sub) -> None:
    p = sub.add_parser("annotate", help=HELP)
    p.add_argument(
        "--pairs",
        required=True,
        nargs="+",
        help=(
            "pair files, CSV or JSONL: `reference` and `candidate` per row (other names: --reference-field, "
            "--candidate-field); `id`, `split`, `context` and any other field kept"
        ),
    )
    p.add_argument(
        "--reference-field",
        default="reference",
        help="the references' column or field; a+b joins sections as written (findings+impression)",
    )
    p.add_argument("--candidate-field", default="candidate", help="the candidates' column or field (a+b joins)")
    p.add_argument(
        "--split-by",
        choices=["auto", "given", "reference", "none"],
        default="auto",
        help=(
            "auto: the pairs' own `split` when every pair has one (refused if a held-out reference repeats a train "
            "one), else by reference report (reference: a seeded 80/10/10 of the normalised reference text, so a "
            "report's pairs share a split); none: one annotations.jsonl. Writes train/validation/test.jsonl, which "
            "green/sft --pairs_dir and crimson/sft --annotations_dir read as they are"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the split by reference report")
    add_teacher_arguments(p)
    add_llm_arguments(p, endpoint_required=False)
    add_resume_arguments(p, "pairs")
    p.add_argument("--out", required=True, type=OutputFolder, help="output directory")


def add_teacher_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--teacher",
        choices=["semantic", "llm"],
        default=None,
        help=(
            "semantic (the semantic_green teacher, no LLM) or llm (appendix A.1, needs --endpoint); "
            "default: llm with --endpoint, else semantic"
        ),
    )
    p.add_argument(
        "--format",
        choices=["green", "crimson"],
        default="green",
        help=(
            "green (GREEN's response, for green/sft) or crimson (crimson-score's prompt and JSON answer, for "
            "crimson/sft: from the LLM teacher at --endpoint, a pair's `context` object entering the prompt; without "
            "--endpoint, from the edit logs of pairs built by `radmetrics data pairs`)"
        ),
    )
    p.add_argument("--encoder", default="default", help="the semantic teacher's sentence encoder")
    p.add_argument(
        "--units",
        choices=["findings", "statements"],
        default="findings",
        help="what the semantic teacher judges: the extracted findings (as semantic_green) or every statement",
    )
    p.add_argument(
        "--quoted",
        action="store_true",
        help=(
            "the semantic teacher names each statement with its first words too, not by number only "
            "(for a student prompted without numbered statements)"
        ),
    )


def run(args: argparse.Namespace) -> int:
    from ..pairs.annotation_run import AnnotateOptionError, AnnotateRequest, annotate_into_folder, chosen_teacher

    request = AnnotateRequest(
        args.pairs,
        args.out,
        args.reference_field,
        args.candidate_field,
        args.split_by,
        args.seed,
        args.teacher,
        args.format,
        args.encoder,
        args.units,
        args.quoted,
        args.endpoint,
        args.llm_cache,
        args.max_reprompts,
        args.limit,
        args.chunk_size,
        args.overwrite,
        report=lambda line: print(line, file=sys.stderr, flush=True),
    )
    try:
        chosen_teacher(request)
    except AnnotateOptionError as exc:  # printed as it always was (exit 1)
        raise SystemExit(f"radmetrics data annotate: {exc}") from None
    print(json.dumps(annotate_into_folder(request), indent=2))
    return 0
