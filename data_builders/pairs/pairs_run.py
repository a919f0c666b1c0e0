"""One `radmetrics data pairs` run into a folder: the corpus' pairs built by the GREEN heuristics (builders.py, seeded,
so a rerun builds the same pairs), annotated chunk by chunk into the folder's record stream (record_stream.py: a killed
run resumes after its last complete chunk, another run in the folder is refused unless `overwrite`), then the split
files, hf/, stats.json and the dataset card published from the stream as `dataset.write_pairs` writes them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from radmetrics.inference.files.output_paths import ensure_output_dir
from radmetrics.inference.loading.checkpoint import sha256_file

from ..corpus.selection import CorpusChoice
from ..record_stream import (
    describe_start,
    mark_complete,
    open_record_stream,
    refuse_other_run,
    run_in_chunks,
    stream_items,
)
from .dataset import annotate_pair_records, publish_pairs, teacher_provenance

OUTPUTS = ("train.jsonl", "validation.jsonl", "test.jsonl", "hf", "stats.json", "README.md")


@dataclass
class PairsRequest:
    """What `radmetrics data pairs` was asked (its options, by name)."""

    corpus: CorpusChoice
    out: str
    heuristics: list[str] | None = None  # None: every heuristic
    per_heuristic: int | None = None
    sentence_splitter: str = "robust"
    encoder: str = "default"
    teacher: str = "programmatic"
    explanation: str | None = None  # None: walkthrough for the semantic teacher, summary for the programmatic one
    units: str = "findings"
    chunk_size: int = 1000
    overwrite: bool = False
    report: Callable[[str], None] = field(default=lambda line: None, repr=False)

    def teacher_explanation(self) -> str:
        return self.explanation or ("walkthrough" if self.teacher == "semantic" else "summary")


def corpus_digest(path: str | None) -> str | dict:
    """The corpus file's sha256, each file's in a corpus folder, or "bundled"."""
    if path is None:
        return "bundled"
    root = Path(path)
    if root.is_dir():
        return {str(f.relative_to(root)): sha256_file(f) for f in sorted(root.rglob("*")) if f.is_file()}
    return sha256_file(root)


def stream_header(request: PairsRequest) -> dict:
    """The inputs and every option that changes a pair or its annotation (the built pairs' digest is added once they
    are built)."""
    options = {
        **request.corpus.provenance(),
        "table_columns": request.corpus.table_columns,
        "seed": request.corpus.seed,
        "heuristics": request.heuristics,
        "per_heuristic": request.per_heuristic,
        "sentence_splitter": request.sentence_splitter,
        "encoder": request.encoder,
        "teacher": request.teacher,
        "explanation": request.teacher_explanation(),
        "units": request.units,
    }
    return {
        "inputs": {"corpus": corpus_digest(request.corpus.path)},
        "options": options,
        "chunk_size": request.chunk_size,
    }


def pairs_digest(pairs: list) -> str:
    return hashlib.sha256(json.dumps([p.to_dict() for p in pairs], sort_keys=True).encode()).hexdigest()


def pairs_into_folder(request: PairsRequest) -> dict:
    """Build and annotate the pairs into `request.out`, resuming a run cut short; the pairs' statistics."""
    from .builders import HEURISTICS, build_pairs

    out = ensure_output_dir(request.out, what="--out")
    header = stream_header(request)
    refuse_other_run(out, header, OUTPUTS, request.overwrite)  # before the pairs are built (an encoder may load)
    reports, splits = request.corpus.reports_and_splits()
    pairs = build_pairs(
        reports,
        splits,
        request.heuristics or HEURISTICS,
        request.per_heuristic,
        request.corpus.seed,
        request.sentence_splitter,
        request.encoder,
    )
    header["inputs"]["built_pairs"], header["pairs"] = pairs_digest(pairs), len(pairs)
    stream = open_record_stream(out, header, OUTPUTS, request.overwrite)
    request.report(describe_start(out, stream, len(pairs), request.chunk_size, "pairs"))
    explanation = request.teacher_explanation()

    def annotate(start: int, end: int) -> list[dict]:
        records = annotate_pair_records(pairs[start:end], request.teacher, explanation, request.units)
        return [{"i": start + k, "record": record} for k, record in enumerate(records)]

    run_in_chunks(stream, len(pairs), len(pairs), request.chunk_size, annotate, request.report)
    annotated = [item["record"] for item in stream_items(stream.path, len(pairs))]
    provenance = {
        **request.corpus.provenance(),
        "seed": request.corpus.seed,
        "sentence_splitter": request.sentence_splitter,
    }
    stats = publish_pairs(
        annotated, pairs, out, teacher_provenance(provenance, request.teacher, explanation, request.units)
    )
    mark_complete(stream)
    return stats
