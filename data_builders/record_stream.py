"""The file a resumable data command (`radmetrics data annotate`, `data pairs`) appends its records to as it works:
OUT/records.stream.jsonl, the same policy as `radmetrics score`'s stream (inference/files/score_stream.py).

Line 1 is the header: what the run is (the inputs' sha256 and every option that changes a record). Then, per chunk of
input items, one line per item ({"i", "record"} or {"i", "failure"}) and a chunk line ({"chunk", "end"}), written in
one append, flushed and fsynced. After the outputs are published from the stream a last line {"complete": true} marks
the run finished.

`--limit N` is not part of the header: a limited run is the first N items of the same run. Chunks always start at a
multiple of the chunk size (which pairs a teacher sees together stays fixed), so a run stopped by --limit inside a
chunk writes that chunk as `partial`, and a later run does it again (an LLM teacher's answers come from its cache).

The one policy for an existing --out folder (`open_record_stream`): a folder with no run in it is used; a run with the
same header resumes after its last complete chunk (a chunk cut short by a kill is dropped and done again, so no item is
written twice); a finished run, a run of other inputs or options, or a folder holding another run's outputs without a
stream is refused in one line (`OutputPathError`) unless `overwrite`, which removes them (not an LLM answer cache).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from radmetrics.inference.files import score_stream
from radmetrics.inference.files.atomic import write_text
from radmetrics.inference.files.score_stream import differing_field, refuse_folder

STREAM_NAME = "records.stream.jsonl"
FORMAT = "radmetrics-data-stream/1"


@dataclass
class RecordStream:
    """Where a run stands: the stream file, the items written in complete chunks, the chunks complete, and whether
    an earlier run started it."""

    path: Path
    done: int
    chunks: int
    resumed: bool


def scan(path: Path) -> tuple[dict | None, int, int, int, bool]:
    """(header, items in complete chunks, complete chunks, byte offset after the last complete chunk, finished) of a
    stream file; a line cut short by a kill ends the scan, and a partial chunk is not complete."""
    return score_stream.scan(path, FORMAT)


def remove_outputs(out: Path, outputs: tuple[str, ...]) -> None:
    """Remove the stream and the named outputs (files or folders) of a run in `out`."""
    for name in (STREAM_NAME, *outputs):
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _within(old: dict, new: dict) -> dict:
    """`old` cut to the fields `new` has (nested), so that a header still missing fields compares on the rest."""
    return {
        key: _within(old[key], value) if isinstance(old.get(key), dict) and isinstance(value, dict) else old.get(key)
        for key, value in new.items()
    }


def refuse_other_run(out: Path, header: dict, outputs: tuple[str, ...], overwrite: bool = False) -> None:
    """The refusals of `open_record_stream` made on the fields `header` has so far, before the costly part of a run
    (building its inputs, loading a model); `open_record_stream` checks the whole header later."""
    path = out / STREAM_NAME
    if overwrite:
        return
    if not path.exists():
        if any((out / name).exists() for name in outputs):
            refuse_folder(out, "holds the outputs of another run")
        return
    old, _, _, _, finished = scan(path)
    if old is None:
        refuse_folder(out, f"holds {STREAM_NAME} that is not a radmetrics data stream")
    if finished:
        refuse_folder(out, "holds a finished run")
    field = differing_field(_within(old, header), header)
    if field:
        refuse_folder(out, f"holds a run of other inputs or options ({field} differs)")


def open_record_stream(out: Path, header: dict, outputs: tuple[str, ...], overwrite: bool = False) -> RecordStream:
    """Start, resume or refuse the run in the folder `out` (checked by `ensure_output_dir`); `outputs`: the names
    the command publishes there, whose presence without a stream means another run's results."""
    path = out / STREAM_NAME
    if overwrite:
        remove_outputs(out, outputs)
    refuse_other_run(out, header, outputs)
    if not path.exists():
        write_text(path, json.dumps({"format": FORMAT, "header": header}) + "\n")
        return RecordStream(path, 0, 0, resumed=False)
    old, done, chunks, offset, _ = scan(path)
    field = differing_field(old, header)
    if field:
        refuse_folder(out, f"holds a run of other inputs or options ({field} differs)")
    with open(path, "r+b") as fh:  # drop a chunk cut short: its items are done again
        fh.truncate(offset)
        fh.flush()
        os.fsync(fh.fileno())
    return RecordStream(path, done, chunks, resumed=True)


def _append(path: Path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def append_chunk(stream: RecordStream, items: list[dict], end: int, partial: bool = False) -> None:
    """Append one chunk's item lines and its chunk line in one write, flushed and fsynced."""
    mark = {"chunk": stream.chunks, "end": end, **({"partial": True} if partial else {})}
    _append(stream.path, [json.dumps(item) for item in items] + [json.dumps(mark)])
    if not partial:
        stream.done, stream.chunks = end, stream.chunks + 1


def mark_complete(stream: RecordStream) -> None:
    _append(stream.path, [json.dumps({"complete": True})])


def stream_items(path: Path, stop: int) -> Iterator[dict]:
    """The item lines of a stream file with `i` below `stop`, in order."""
    with open(path, encoding="utf-8") as fh:
        next(fh)  # the header
        for line in fh:
            item = json.loads(line)
            if "i" in item and item["i"] < stop:
                yield item


def describe_start(out: Path, stream: RecordStream, stop: int, chunk: int, noun: str) -> str:
    """The line that says how the run starts: new, resumed from where, or already done up to `stop`."""
    if stream.resumed and stream.done >= stop:
        return f"{out}: every one of the {stop} {noun} was done by an earlier run; writing the outputs"
    if stream.resumed:
        return (
            f"{out}: resuming: {stream.done} of {stop} {noun} done in {stream.chunks} complete chunk(s) of {chunk}; "
            f"continuing from {noun[:-1]} {stream.done + 1}"
        )
    return f"{out}: a new run of {stop} {noun} in chunks of {chunk}"


def run_in_chunks(
    stream: RecordStream,
    stop: int,
    total: int,
    chunk: int,
    work: Callable[[int, int], list[dict]],
    report: Callable[[str], None] = lambda line: None,
) -> None:
    """Call `work(start, end)` (the item lines of items start..end-1) on each chunk after the done ones, up to `stop`
    of the `total` items, appending each chunk to the stream as it is done. A last chunk that `stop` cuts short
    (--limit inside a chunk) is written as partial."""
    for start in range(stream.done, stop, chunk):
        end = min(start + chunk, stop)
        append_chunk(stream, work(start, end), end, partial=end < min(start + chunk, total))
        report(f"done {end} of {stop}")
