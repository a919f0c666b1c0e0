"""Read reports for scoring: txt (one report per line), CSV, JSONL, or a JSON list; ids when the file has them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

DEFAULT_FIELDS = ("report", "text")


class ReportFileError(ValueError):
    pass


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise ReportFileError(f"report file not found: {path}")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ReportFileError(f"{path}: line {line} is not UTF-8 (byte {data[exc.start]:#x} at offset {exc.start}); re-encode the file as UTF-8") from exc


def read_jsonl_records(path: str | Path, required: tuple[str, ...] | list[str] = ()) -> list[tuple[int, dict]]:
    """(line number, record) for each non-blank line; an error names the file and line of a bad record."""
    path = Path(path)
    records = []
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportFileError(f"{path}: line {n} is not valid JSON ({exc})") from exc
        missing = [k for k in required if not isinstance(record, dict) or k not in record]
        if missing:
            raise ReportFileError(f"{path}: line {n} lacks field(s) {missing}")
        records.append((n, record))
    return records


def _pick(record: dict, field: str | None, path: Path, where: str) -> str | list:
    names = [field] if field else [f for f in DEFAULT_FIELDS if f in record]
    if not names or names[0] not in record:
        raise ReportFileError(f"{path}: {where} has no field {field or ' or '.join(DEFAULT_FIELDS)!r} (found {sorted(record)}); pass --ref-field/--hyp-field")
    value = record[names[0]]
    if value is None:
        return ""
    grounded = isinstance(value, list) and all(isinstance(p, dict) and "text" in p for p in value)
    if not isinstance(value, str) and not grounded:
        raise ReportFileError(f"{path}: {where} field {names[0]!r} is {type(value).__name__}, not a string "
                              "or a grounded report (a list of {\"text\", \"boxes\"})")
    return value


def read_reports(path: str | Path, field: str | None = None, id_field: str = "id") -> tuple[list[str], list[str] | None]:
    """Returns (reports, ids or None)."""
    path = Path(path)
    text = _read_text(path)
    suffix = path.suffix.lower()
    if suffix == ".txt":
        return text.splitlines(), None
    if suffix == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        if not rows:
            raise ReportFileError(f"{path}: no rows")
        return [_pick(r, field, path, f"row {i + 2}") for i, r in enumerate(rows)], ([r[id_field] for r in rows] if id_field in rows[0] else None)
    if suffix == ".jsonl":
        records = read_jsonl_records(path)
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReportFileError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(data, list):
            raise ReportFileError(f"{path}: expected a JSON list of reports or of objects")
        records = list(enumerate(data, 1))
    else:
        raise ReportFileError(f"{path}: unsupported report file type {suffix!r}; use .txt, .csv, .jsonl or .json")
    reports, ids = [], []
    for n, rec in records:
        if isinstance(rec, str):
            reports.append(rec)
            ids.append(None)
        elif isinstance(rec, dict):
            reports.append(_pick(rec, field, path, f"record {n}"))
            ids.append(rec.get(id_field))
        else:
            raise ReportFileError(f"{path}: record {n} is {type(rec).__name__}, expected a string or an object")
    return reports, ([str(i) for i in ids] if all(i is not None for i in ids) else None)
