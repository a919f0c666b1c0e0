"""Report pairs read from their files a chunk at a time, so that a streaming `radmetrics score` holds one chunk of
texts, not the files: .txt (one report per line) and .jsonl files, paired by position or by id.

`streamed_pairs` first reads both files once, line by line, checking every record as `report_io.read_reports` does
(and keeping only the ids and, for candidates paired by id, each record's byte offset); `chunk(start, stop)` then reads
the pairs' texts. Any problem found there is reported by `read_reports` and `pair_reports` themselves, so a bad file
gets the same one-line error as everywhere else. Files this module does not stream (.csv, .json, a .txt file with
classic Mac OS line endings) are read whole by `report_io` (`InMemoryPairs`).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .report_io import MAX_REPORT_CHARS, ReportFileError, _checked, _pick, pair_reports, read_reports

STREAMED = (".txt", ".jsonl")


@dataclass
class ReportSide:
    """How one file is read: its path, the report field, the id field, whether empty reports are allowed."""

    path: Path
    field: str | None
    id_field: str | None
    allow_empty: bool
    id_required: bool


@dataclass
class InMemoryPairs:
    """Pairs held in memory (read whole by `report_io`, or given to the Python API)."""

    references: list
    candidates: list
    ids: list[str] | None

    def __len__(self) -> int:
        return len(self.references)

    def chunk(self, start: int, stop: int) -> tuple[list, list]:
        return list(self.references[start:stop]), list(self.candidates[start:stop])

    def texts(self, indices: list[int]) -> tuple[list, list]:
        return [self.references[i] for i in indices], [self.candidates[i] for i in indices]


def canonical_error(side: ReportSide, fallback: str) -> None:
    """Raise the error `read_reports` gives for the file (read whole: only on this error path), or `fallback`."""
    read_reports(side.path, side.field, side.id_field, side.allow_empty, side.id_required)
    raise ReportFileError(f"{side.path}: {fallback}")


def lines(side: ReportSide) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text without its "\\r\\n" or "\\n") of each line, decoded as UTF-8 (a byte-order
    mark dropped); a problem `report_io.read_text_file` refuses raises its ReportFileError."""
    if not side.path.is_file():
        raise ReportFileError(f"report file not found: {side.path}")
    offset = 0
    with open(side.path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            start, offset = offset, offset + len(raw)
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                canonical_error(side, f"line {number} is not UTF-8; re-encode the file as UTF-8")
            text = text[:-1] if text.endswith("\n") else text
            text = text[:-1] if text.endswith("\r") else text
            if len(text) > MAX_REPORT_CHARS:
                canonical_error(side, f"line {number} is longer than any report; is this the right file?")
            yield number, start, text


def record_of(side: ReportSide, number: int, text: str) -> tuple[object, object, bool]:
    """(report, id or None, whether the record has the id field) of one line of a .txt or .jsonl file, checked as
    `read_reports` checks it."""
    where = f"line {number}"
    if side.path.suffix.lower() == ".txt":
        return _checked(text, side.path, where, allow_empty=side.allow_empty), None, False
    try:
        record = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ReportFileError(f"{side.path}: {where} is not valid JSON ({exc})") from exc
    if isinstance(record, dict):
        found = record.get(side.id_field) if side.id_field else None
        has_field = bool(side.id_field) and side.id_field in record
        return _pick(record, side.field, side.path, where, side.allow_empty), found, has_field
    return _checked(record, side.path, where, allow_empty=side.allow_empty), None, False


@dataclass
class SideIndex:
    """What the first pass keeps of one file: the number of records, their ids, each record's byte offset, the
    number of empty reports and whether any is grounded."""

    count: int = 0
    ids: list | None = field(default_factory=list)
    offsets: array = field(default_factory=lambda: array("q"))
    empty: int = 0
    has_id_field: bool = False
    grounded: bool = False


def index_side(side: ReportSide) -> SideIndex:
    """Check every record of one file (ReportFileError as `read_reports` words it) and index it."""
    index, jsonl = SideIndex(), side.path.suffix.lower() == ".jsonl"
    if side.id_required and side.id_field and not jsonl:
        canonical_error(side, f"a .txt file has no id field {side.id_field!r}")
    for number, offset, text in lines(side):
        if jsonl and not text.strip():
            continue
        report, found, has_field = record_of(side, number, text)
        index.grounded = index.grounded or isinstance(report, list)
        index.count += 1
        index.ids.append(found)
        index.offsets.append(offset)
        index.empty += isinstance(report, str) and not report.strip()
        index.has_id_field = index.has_id_field or has_field
    if not index.count:
        raise ReportFileError(f"{side.path}: no reports in the file; give a file with at least one report")
    if side.id_required and side.id_field and not index.has_id_field:
        canonical_error(side, f"no id field {side.id_field!r}")
    present = [i is not None and str(i).strip() != "" for i in index.ids]
    if any(present) and (not all(present) or len(set(map(str, index.ids))) < len(index.ids)):
        canonical_error(side, "ids are missing on some records or repeated")
    index.ids = [str(i) for i in index.ids] if any(present) else None
    return index


def read_at(side: ReportSide, fh, offset: int) -> object:
    """The report of the record that starts at byte `offset` of the open (binary) file `fh`."""
    fh.seek(offset)
    text = fh.readline().decode("utf-8-sig" if offset == 0 else "utf-8")
    text = text[:-1] if text.endswith("\n") else text
    return record_of(side, 0, text[:-1] if text.endswith("\r") else text)[0]


@dataclass
class StreamedPairs:
    """Pairs whose texts are read from the files when asked for: `chunk(start, stop)`, `texts(indices)`."""

    references: ReportSide
    candidates: ReportSide
    ids: list[str] | None
    reference_offsets: array
    candidate_offsets: array  # in the references' order
    empty: int
    grounded: bool  # some report is grounded (a list of {"text", "boxes"})

    def __len__(self) -> int:
        return len(self.reference_offsets)

    def texts(self, indices) -> tuple[list, list]:
        found: tuple[list, list] = ([], [])
        for side, offsets, out in (
            (self.references, self.reference_offsets, found[0]),
            (self.candidates, self.candidate_offsets, found[1]),
        ):
            with open(side.path, "rb") as fh:
                out.extend(read_at(side, fh, offsets[i]) for i in indices)
        return found

    def chunk(self, start: int, stop: int) -> tuple[list, list]:
        return self.texts(range(start, stop))


def streamed_pairs(references: ReportSide, candidates: ReportSide, names=("references", "candidates")):
    """The pairs of two files, checked and indexed at the door (nothing else loads first): StreamedPairs for .txt
    and .jsonl files, else the files read whole (InMemoryPairs). Pairing as `report_io.pair_reports` pairs: by id when
    both files carry ids, by position when neither does; its errors otherwise."""
    streamable = all(side.path.suffix.lower() in STREAMED for side in (references, candidates))
    if not streamable or any(classic_mac(side.path) for side in (references, candidates)):
        return in_memory(references, candidates, names)
    ref, cand = index_side(references), index_side(candidates)
    if (ref.ids is None) != (cand.ids is None) or (ref.ids is None and ref.count != cand.count):
        pair_reports(range(ref.count), ref.ids, range(cand.count), cand.ids, names)  # raises its error
    if ref.ids is None:
        offsets = cand.offsets
    else:
        position = {i: n for n, i in enumerate(cand.ids)}
        if len(position) != len(ref.ids) or any(i not in position for i in ref.ids):
            pair_reports([], ref.ids, [], cand.ids, names)  # raises: ids on one side only
        offsets = array("q", (cand.offsets[position[i]] for i in ref.ids))
    grounded = ref.grounded or cand.grounded
    return StreamedPairs(references, candidates, ref.ids, ref.offsets, offsets, cand.empty, grounded)


def classic_mac(path: Path) -> bool:
    """A file with "\\r" line endings and no "\\n" (read whole by report_io, which splits it on "\\r")."""
    if not path.is_file():
        return False  # index_side says it is missing
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    return b"\r" in head and b"\n" not in head


def in_memory(references: ReportSide, candidates: ReportSide, names) -> InMemoryPairs:
    read = []
    for side in (references, candidates):
        reports, ids = read_reports(side.path, side.field, side.id_field, side.allow_empty, side.id_required)
        if not reports:
            raise ReportFileError(f"{side.path}: no reports in the file; give a file with at least one report")
        read.append((reports, ids))
    refs, cands, ids = pair_reports(*read[0], *read[1], names)
    return InMemoryPairs(refs, cands, ids)
