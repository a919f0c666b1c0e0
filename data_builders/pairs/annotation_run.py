"""One `radmetrics data annotate` run into a folder, start to finish: the pairs read and split (pair_files.py), the
teacher chosen and checked before anything loads, the pairs annotated chunk by chunk into the folder's record stream
(record_stream.py: a killed run resumes after its last complete chunk, another run in the folder is refused unless
`overwrite`), then the split files, stats.json, the card and (LLM teacher) failures.jsonl and llm_manifest.json
published whole from the stream.

Teachers: `semantic` (the semantic_green teacher, no LLM), `llm` (GREEN's appendix A.1 prompt, or CRIMSON's with
format `crimson`, at an endpoint; answers cached in OUT/llm_cache.sqlite), `programmatic` (CRIMSON answers from the
edit logs of pairs built by `radmetrics data pairs`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from radmetrics.inference.files.output_paths import ensure_output_dir
from radmetrics.inference.loading.checkpoint import sha256_file
from radmetrics.inference.metrics.base import OptionError

from ..record_stream import describe_start, mark_complete, open_record_stream, run_in_chunks, stream_items
from .pair_files import PairFileError, assign_pair_splits, empty_splits, read_pair_files

SPLIT_FILES = ("train.jsonl", "validation.jsonl", "test.jsonl", "annotations.jsonl")
OUTPUTS = (*SPLIT_FILES, "hf", "stats.json", "README.md", "failures.jsonl", "llm_manifest.json")


class AnnotateOptionError(OptionError):
    """Options of `radmetrics data annotate` that cannot go together: one line naming the fix."""


@dataclass
class AnnotateRequest:
    """What `radmetrics data annotate` was asked (its options, by name)."""

    pairs: list[str]
    out: str
    reference_field: str = "reference"
    candidate_field: str = "candidate"
    split_by: str = "auto"
    seed: int = 0
    teacher: str | None = None  # semantic | llm; None: llm with an endpoint, else semantic
    format: str = "green"
    encoder: str = "default"
    units: str = "findings"
    quoted: bool = False
    endpoint: str | None = None
    llm_cache: str | None = None
    max_reprompts: int = 2
    limit: int | None = None
    chunk_size: int = 1000
    overwrite: bool = False
    report: Callable[[str], None] = field(default=lambda line: None, repr=False)


def chosen_teacher(request: AnnotateRequest) -> str:
    """semantic, llm or programmatic, from --teacher, --format and --endpoint; AnnotateOptionError when they clash."""
    if request.format == "crimson":
        if request.teacher == "semantic":
            raise AnnotateOptionError(
                "--format crimson is written by an LLM teacher (--endpoint YAML) or, for pairs built by `radmetrics "
                "data pairs`, by the programmatic teacher (no --endpoint)"
            )
        return "llm" if request.endpoint else "programmatic"
    teacher = request.teacher or ("llm" if request.endpoint else "semantic")
    if teacher == "semantic" and request.endpoint:
        raise AnnotateOptionError("--endpoint is for --teacher llm; the semantic teacher needs no LLM")
    if teacher == "llm" and not request.endpoint:
        raise AnnotateOptionError("the LLM teacher needs --endpoint YAML (see configs/llm/)")
    return teacher


def read_pairs(request: AnnotateRequest) -> tuple[list[dict], dict, int]:
    """(the pairs --pairs names cut to --limit, with their splits; the split statistics; the number of pairs before
    the cut). Refused in one line when a split would be empty or the given splits leak."""
    every = read_pair_files(request.pairs, request.reference_field, request.candidate_field)
    pairs, stats = assign_pair_splits(every[: request.limit], request.split_by, request.seed)
    if empty_splits(stats):
        raise PairFileError(
            f"{len(pairs)} pairs leave no {' and no '.join(empty_splits(stats))} pair (split "
            f"{stats['split_by']}): give more pairs, or pass --split-by none for annotations not trained on"
        )
    return pairs, stats, len(every)


def refuse_unbuilt(pairs: list[dict]) -> None:
    unbuilt = [p["id"] for p in pairs if "edits" not in p]
    if unbuilt:
        raise PairFileError(
            f"--format crimson without --endpoint reads each pair's edit log, and pairs {unbuilt[:3]} have none "
            "(pairs of `radmetrics data pairs`): pass --endpoint YAML for an LLM teacher"
        )


def stream_header(request: AnnotateRequest, teacher: str, split_stats: dict, total: int) -> dict:
    """What makes two runs the same run: the inputs' sha256 and every option that changes a record (not --limit:
    a limited run is the start of the same run)."""
    inputs = {str(path): sha256_file(Path(path)) for path in request.pairs}
    if request.endpoint:
        inputs["endpoint"] = sha256_file(Path(request.endpoint))
    options = {
        "teacher": teacher,
        "format": request.format,
        "reference_field": request.reference_field,
        "candidate_field": request.candidate_field,
        "split_by": split_stats["split_by"],
        "seed": request.seed,
        "encoder": request.encoder,
        "units": request.units,
        "quoted": request.quoted,
        "max_reprompts": request.max_reprompts,
    }
    return {"inputs": inputs, "options": options, "pairs": total, "chunk_size": request.chunk_size}


def annotate_into_folder(request: AnnotateRequest) -> dict:
    """Annotate the pairs into `request.out`, resuming a run cut short; the summary the command prints."""
    from .pair_annotators import annotator_for

    teacher = chosen_teacher(request)
    out = ensure_output_dir(request.out, what="--out")
    pairs, split_stats, total = read_pairs(request)
    if teacher == "programmatic":
        refuse_unbuilt(pairs)
    header = stream_header(request, teacher, split_stats, total)
    stream = open_record_stream(out, header, OUTPUTS, request.overwrite)
    stop = len(pairs)
    request.report(describe_start(out, stream, stop, request.chunk_size, "pairs"))
    annotator = annotator_for(teacher, request, out)
    run_in_chunks(stream, stop, total, request.chunk_size, lambda a, b: annotator.items(pairs, a, b), request.report)
    items = list(stream_items(stream.path, stop))
    records = [item["record"] for item in items if "record" in item]
    failures = [item["failure"] for item in items if "failure" in item]
    per_file = write_annotations(records, out, split_stats)
    summary = annotator.finish(out, records, failures, per_file)
    if stop == total:
        mark_complete(stream)
    return summary


def write_annotations(records: list[dict], out: Path, split_stats: dict | None) -> dict[str, int]:
    """train/validation/test.jsonl (or annotations.jsonl with --split-by none), hf/, stats.json; the count per file."""
    from .pair_files import write_split_files

    stats = {**(split_stats or {"split_by": "given"}), "written": len(records)}
    # a patient context's fields differ from pair to pair: the Arrow copy holds it as JSON text
    return write_split_files(records, Path(out), stats, to_arrow=_context_as_text)


def _context_as_text(record: dict) -> dict:
    return {**record, "context": json.dumps(record["context"])} if "context" in record else record
