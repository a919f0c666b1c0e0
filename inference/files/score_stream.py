"""The file a streaming `radmetrics score` run appends to as it scores: OUT/scores.stream.jsonl.

Line 1 is the header: what the run is (the score keys' signatures, the inputs' sha256, the pairing and chunk settings,
the number of pairs). Then, per chunk of pairs, one line per pair ({"i", "id", "values", "statistics", "details"}) and
a chunk line ({"chunk", "end", "meta"}) that marks the chunk complete; each chunk is written, flushed and fsynced at
once. After the outputs are published a last line {"complete": true} marks the run finished.

The one policy for an existing --out folder (`open_stream`): a folder with no run in it is used; a run with the same
header resumes after its last complete chunk (a chunk cut short by a kill is dropped and scored again, so no pair is
written twice); a finished run, a run of other inputs or options, or a folder holding the results of a run without a
stream file is refused in one line (`OutputPathError`) unless `overwrite`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .atomic import write_text
from .json_io import dumps
from .output_paths import OutputPathError

STREAM_NAME = "scores.stream.jsonl"
FORMAT = "radmetrics-score-stream/1"
RESULT_FILES = ("per_sample.jsonl", "summary.json", "run.json")  # a folder holding these holds a finished run
OTHER_OUTPUTS = ("summary.md", "report.html", "baselines.json")


@dataclass
class StreamState:
    """Where a run stands: the stream file, the pairs already written (a multiple of the chunk size, or all), and
    the chunks complete."""

    path: Path
    done: int
    chunks: int
    resumed: bool


def differing_field(old: dict, new: dict, prefix: str = "") -> str | None:
    """The first (dotted) field whose value differs between two headers, or None when they match."""
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found = differing_field(a, b, f"{prefix}{key}.")
            if found:
                return found
        elif a != b:
            return f"{prefix}{key}"
    return None


def scan(path: Path, stream_format: str = FORMAT) -> tuple[dict | None, int, int, int, bool]:
    """(header, items in complete chunks, complete chunks, byte offset after the last complete chunk, finished) of a
    stream file (score's, or another of the same layout: `stream_format`), read line by line; a line cut short by a
    kill ends the scan, and a chunk marked partial is not complete."""
    header, done, chunks, offset, finished = None, 0, 0, 0, False
    with open(path, "rb") as fh:
        position = 0
        for raw in fh:
            position += len(raw)
            if not raw.endswith(b"\n"):
                break
            try:
                record = json.loads(raw)
            except ValueError:
                break
            if header is None:
                if record.get("format") != stream_format:
                    break
                header, offset = record.get("header"), position
            elif "chunk" in record and not record.get("partial"):
                done, chunks, offset = record["end"], chunks + 1, position
            elif record.get("complete"):
                finished = True
    return header, done, chunks, offset, finished


def refuse_folder(out: Path, why: str) -> None:
    raise OutputPathError(f"--out {out} {why}: pass --overwrite to replace it, or choose another --out")


def open_stream(out: Path, header: dict, overwrite: bool = False) -> StreamState:
    """Start, resume or refuse the run in the folder `out` (already checked by `ensure_output_dir`)."""
    path = out / STREAM_NAME
    if overwrite:
        remove_results(out)
    if not path.exists():
        if any((out / name).exists() for name in RESULT_FILES):
            refuse_folder(out, "holds the results of another run")
        return _start(path, header)
    old, done, chunks, offset, finished = scan(path)
    if old is None:
        refuse_folder(out, f"holds {STREAM_NAME} that is not a radmetrics score stream")
    if finished:
        refuse_folder(out, "holds a finished run")
    field = differing_field(old, header)
    if field:
        refuse_folder(out, f"holds a run of other inputs or options ({field} differs)")
    with open(path, "r+b") as fh:  # drop a chunk cut short: its pairs are scored again
        fh.truncate(offset)
        fh.flush()
        os.fsync(fh.fileno())
    return StreamState(path, done, chunks, resumed=True)


def remove_results(out: Path) -> None:
    """Remove what a scoring run wrote in `out` (not the LLM answer cache: answers paid for are kept)."""
    for name in (STREAM_NAME, *RESULT_FILES, *OTHER_OUTPUTS):
        (out / name).unlink(missing_ok=True)
    for detail in (out / "details").glob("*.jsonl"):
        detail.unlink()


def _start(path: Path, header: dict) -> StreamState:
    write_text(path, dumps({"format": FORMAT, "header": header}) + "\n")  # published whole; then appended to
    return StreamState(path, 0, 0, resumed=False)


def append_chunk(state: StreamState, rows: list[dict], end: int, meta: dict) -> None:
    """Append one chunk's pair lines and its completion line in one write, flushed and fsynced."""
    lines = [dumps(row) for row in rows]
    lines.append(dumps({"chunk": state.chunks, "end": end, "meta": meta}))
    with open(state.path, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    state.done, state.chunks = end, state.chunks + 1


def mark_complete(state: StreamState) -> None:
    with open(state.path, "a", encoding="utf-8") as fh:
        fh.write(dumps({"complete": True}) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def stream_records(path: Path) -> Iterator[dict]:
    """The pair and chunk lines of a stream file, in order (one at a time: nothing is held)."""
    with open(path, encoding="utf-8") as fh:
        next(fh)  # the header
        for line in fh:
            record = json.loads(line)
            if "i" in record or "chunk" in record:
                yield record


def pair_records(path: Path) -> Iterator[dict]:
    """The pair lines of a stream file, in order."""
    return (record for record in stream_records(path) if "i" in record)
