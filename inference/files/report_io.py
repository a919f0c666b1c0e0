"""Read reports for scoring: txt (one report per line), CSV, JSONL, or a JSON list; ids when the file has them.

Files are read as written: a CSV goes through `csv` on a stream opened with `newline=""`, so a quoted field keeps
its line breaks (LF or CRLF); .txt and .jsonl files are split on "\n" alone (a "\r" before it is dropped), so a report
keeps every other character, U+2028, U+0085 and form feeds included. A file with "\r" and no "\n" at all was written
with classic Mac OS line endings and is split on "\r".

Bad input is a `ReportFileError` naming the file and the line (or row, or record): a file that is not UTF-8, a line
over `MAX_REPORT_CHARS` characters (most likely the wrong file), malformed CSV or JSON, a missing field, and a report
that is null, not a string (or a grounded report), or empty where an empty one is not allowed (references). Ids, where
the file carries them, must be present on every
record and unique; `pair_reports` then pairs two files by id (any field: `id_field`, `--id-field`), and refuses to pair
a file with ids and one without. A field named `a+b` (`--ref-field findings+impression`) is the record's sections a and
b joined as written (`joined_sections`).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

DEFAULT_FIELDS = ("report", "text")
MAX_REPORT_CHARS = 100_000  # radiology reports run to a few thousand characters


class ReportFileError(ValueError):
    pass


def read_text_file(path: Path) -> str:
    """A user's text file as UTF-8 (a byte-order mark dropped, line endings kept), refused with the line when it is
    not UTF-8 or holds a line longer than any report."""
    if not path.is_file():
        raise ReportFileError(f"report file not found: {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ReportFileError(
            f"{path}: line {line} is not UTF-8 (byte {data[exc.start]:#x} at offset {exc.start}); re-encode the file"
            " as UTF-8"
        ) from exc
    for n, line in enumerate(split_lines(text), 1):
        if len(line) > MAX_REPORT_CHARS:
            raise ReportFileError(
                f"{path}: line {n} holds {len(line):,} characters, more than a report's {MAX_REPORT_CHARS:,}; "
                "is this the right file?"
            )
    return text


def split_lines(text: str) -> list[str]:
    """Lines split on "\n" alone, each without its "\r\n" or "\n" ending; a final newline adds no empty line.
    (`str.splitlines` also splits on U+2028, U+2029, U+0085, form feeds and lone "\r", which can stand inside a
    report.)
    Text with "\r" and no "\n" (classic Mac OS line endings) is split on "\r"."""
    lines = text.split("\r" if "\r" in text and "\n" not in text else "\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_jsonl_records(path: str | Path, required: tuple[str, ...] | list[str] = ()) -> list[tuple[int, dict]]:
    """(line number, record) for each non-blank line; an error names the file and line of a bad record."""
    path = Path(path)
    records = []
    for n, line in enumerate(split_lines(read_text_file(path)), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ReportFileError(f"{path}: line {n} is not valid JSON ({exc})") from exc
        missing = [k for k in required if not isinstance(record, dict) or k not in record]
        if missing:
            raise ReportFileError(f"{path}: line {n} lacks field(s) {missing}")
        records.append((n, record))
    return records


def _checked(value, path: Path, where: str, name: str = "the report", allow_empty: bool = False) -> str | list:
    if value is None:
        raise ReportFileError(f"{path}: {where}: {name} is null")
    grounded = isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in value)
    if not isinstance(value, str) and not grounded:
        raise ReportFileError(
            f"{path}: {where}: {name} is {type(value).__name__}, not a string "
            'or a grounded report (a list of {"text", "boxes"})'
        )
    if not allow_empty and not (value.strip() if isinstance(value, str) else value):
        raise ReportFileError(f"{path}: {where}: {name} is empty")
    return value


SECTION_SEPARATOR = "\n"


def joined_sections(record: dict, fields: str) -> str | None:
    """The sections `fields` names ("findings+impression"), each as written, joined in that order by one line break;
    a section that is empty or null is left out (a report without an impression). None when a field is missing.
    A record with a field named `fields` itself (a column called "a+b") gives that field."""
    if fields in record:
        return record[fields]
    names = fields.split("+")
    if not all(name in record for name in names):
        return None
    return SECTION_SEPARATOR.join(
        record[name] for name in names if isinstance(record[name], str) and record[name].strip()
    )


def _pick(record: dict, field: str | None, path: Path, where: str, allow_empty: bool = False) -> str | list:
    if field and "+" in field and field not in record:
        return _pick_sections(record, field, path, where, allow_empty)
    names = [field] if field else [f for f in DEFAULT_FIELDS if f in record]
    if not names or names[0] not in record:
        raise ReportFileError(
            f"{path}: {where} has no field {field or ' or '.join(DEFAULT_FIELDS)!r} (found"
            f" {sorted(map(str, record))}); pass --ref-field/--hyp-field"
        )
    return _checked(record[names[0]], path, where, f"field {names[0]!r}", allow_empty)


def _pick_sections(record: dict, fields: str, path: Path, where: str, allow_empty: bool) -> str:
    """`--ref-field findings+impression`: every named section must be a field (a null or non-string one is refused);
    the report is their join (joined_sections)."""
    for name in fields.split("+"):
        if name not in record:
            raise ReportFileError(
                f"{path}: {where} has no field {name!r} (found {sorted(map(str, record))}); "
                "--ref-field/--hyp-field a+b joins fields a and b"
            )
        if record[name] is not None and not isinstance(record[name], str):
            _checked(record[name], path, where, f"field {name!r}")
    return _checked(joined_sections(record, fields), path, where, f"fields {fields!r} joined", allow_empty)


def _ids(found: list, path: Path, where: list[str]) -> list[str] | None:
    """Every record's id as a string, or None when no record has one; mixed or repeated ids are an error."""
    present = [i is not None and str(i).strip() != "" for i in found]
    if not any(present):
        return None
    if not all(present):
        lacking = [w for w, ok in zip(where, present) if not ok]
        raise ReportFileError(
            f"{path}: {len(lacking)} record(s) have no id while the others do, e.g. {', '.join(lacking[:5])}"
        )
    ids = [str(i) for i in found]
    seen, repeated = set(), []
    for i in ids:
        if i in seen and i not in repeated:
            repeated.append(i)
        seen.add(i)
    if repeated:
        raise ReportFileError(f"{path}: id(s) {', '.join(repeated[:10])} appear more than once")
    return ids


def _refuse_missing_id_field(path: Path, id_field: str, columns) -> None:
    raise ReportFileError(
        f"{path}: no id field {id_field!r}; its fields: {', '.join(sorted(map(str, columns)))} "
        "(pass --id-field, or --ref-id-field / --hyp-id-field, naming one of them)"
    )


def read_csv_rows(path: Path, text: str) -> list[tuple[int, dict]]:
    """(line where the row starts, {column: value}) per data row of a CSV file, read strictly: a quoted field that is
    never closed, text after a closing quote, or a row with more fields than the header is a ReportFileError naming
    the file and the line (Python's csv module would otherwise read the rest of the file into one field, or drop the
    extra values). A row with fewer fields leaves the rest None; blank lines are skipped."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)

    def fail(line: int, exc: csv.Error):
        what = "a quoted field opened on this line is never closed" if "end of data" in str(exc) else str(exc)
        return ReportFileError(f"{path}: line {line}: {what} (not a well-formed CSV row)")

    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise fail(1, exc) from None
    if not header:
        raise ReportFileError(f"{path}: no header row")
    rows, start = [], reader.line_num + 1
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise fail(start, exc) from None
        if row is None:
            return rows
        if len(row) > len(header):
            raise ReportFileError(
                f"{path}: line {start}: {len(row)} fields where the header has {len(header)} (quote a field that "
                "holds a comma)"
            )
        if row:
            rows.append((start, dict(zip(header, row + [None] * (len(header) - len(row))))))
        start = reader.line_num + 1


def read_reports(
    path: str | Path,
    field: str | None = None,
    id_field: str | None = "id",
    allow_empty: bool = False,
    id_required: bool = False,
) -> tuple[list, list[str] | None]:
    """Returns (reports, ids or None). `allow_empty` for generated reports: an empty one is a model's real output and
    is scored; an empty reference is a defect in the data and refused. `id_field` None or "": no ids. `id_required`
    (the
    user named the id field): a file without that field is refused, with its fields listed."""
    path = Path(path)
    text = read_text_file(path)
    suffix = path.suffix.lower()
    id_required = id_required and bool(id_field)
    if suffix == ".txt":
        if id_required:
            raise ReportFileError(
                f"{path}: a .txt file (one report per line) has no id field {id_field!r}; use a CSV, "
                "JSONL or JSON file with ids, or pass --id-field '' to pair by position"
            )
        return [
            _checked(line, path, f"line {n}", allow_empty=allow_empty) for n, line in enumerate(split_lines(text), 1)
        ], None
    if suffix == ".csv":
        numbered = read_csv_rows(path, text)
        if not numbered:
            raise ReportFileError(f"{path}: no rows")
        rows, where = [row for _, row in numbered], [f"line {line}" for line, _ in numbered]
        reports = [_pick(r, field, path, w, allow_empty) for r, w in zip(rows, where)]
        if id_required and id_field not in rows[0]:
            _refuse_missing_id_field(path, id_field, rows[0])
        return reports, (
            _ids([r.get(id_field) for r in rows], path, where) if id_field and id_field in rows[0] else None
        )
    if suffix == ".jsonl":
        records = read_jsonl_records(path)
        where = [f"line {n}" for n, _ in records]
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ReportFileError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(data, list):
            raise ReportFileError(f"{path}: expected a JSON list of reports or of objects")
        records = list(enumerate(data, 1))
        where = [f"record {n}" for n, _ in records]
    else:
        raise ReportFileError(f"{path}: unsupported report file type {suffix!r}; use .txt, .csv, .jsonl or .json")
    reports, ids = [], []
    for (_, record), w in zip(records, where):
        if isinstance(record, dict):
            reports.append(_pick(record, field, path, w, allow_empty))
            ids.append(record.get(id_field) if id_field else None)
        else:
            reports.append(_checked(record, path, w, allow_empty=allow_empty))
            ids.append(None)
    if id_required and not any(isinstance(r, dict) and id_field in r for _, r in records):
        _refuse_missing_id_field(path, id_field, {k for _, r in records[:100] if isinstance(r, dict) for k in r})
    return reports, _ids(ids, path, where)


def read_columns(path: str | Path, fields: list[str]) -> list[dict]:
    """Each record's `fields` of a CSV, JSONL or JSON file of objects, in file order (the patient context of each
    reference: `radmetrics score --context-fields`); ReportFileError naming the file and a field it lacks."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = [row for _, row in read_csv_rows(path, read_text_file(path))]
    elif suffix == ".jsonl":
        rows = [record for _, record in read_jsonl_records(path)]
    elif suffix == ".json":
        rows = json.loads(read_text_file(path))
    else:
        raise ReportFileError(f"{path}: context fields need a CSV, JSONL or JSON file of records, not {suffix!r}")
    for n, row in enumerate(rows, 1):
        missing = [f for f in fields if not isinstance(row, dict) or f not in row]
        if missing:
            raise ReportFileError(f"{path}: record {n} has no field {missing[0]!r} (--context-fields)")
    return [{f: row[f] for f in fields} for row in rows]


ID_LIKE = ("study_id", "dicom_id", "subject_id", "accession", "accession_number", "report_id", "image_id")


def is_id_like(column: str) -> bool:
    name = str(column).strip().lower()
    return name == "id" or name in ID_LIKE or name.endswith("_id")


def file_columns(path: str | Path) -> set[str] | None:
    """The columns (or the first records' fields) of a CSV, JSONL or JSON file; None for a .txt file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = read_csv_rows(path, read_text_file(path))
        return set(rows[0][1]) if rows else set()
    if suffix == ".jsonl":
        return {k for record in first_jsonl_records(path, 100) if isinstance(record, dict) for k in record}
    if suffix == ".json":
        data = json.loads(read_text_file(path))
        return (
            {k for record in data[:100] if isinstance(record, dict) for k in record}
            if isinstance(data, list)
            else set()
        )
    return None


def first_jsonl_records(path: Path, limit: int) -> list:
    """The first `limit` records of a JSONL file that parse, read line by line (not the whole file: the readers check
    every line when they read it)."""
    found = []
    if not path.is_file():
        return found
    with open(path, "rb") as fh:
        for raw in fh:
            if len(found) >= limit:
                break
            try:
                found.append(json.loads(raw.decode("utf-8-sig", errors="replace")))
            except (ValueError, RecursionError):
                continue
    return found


def refuse_silent_pairing(ref_path: str | Path, hyp_path: str | Path) -> None:
    """With no id field named: files that both carry `id` pair by it; otherwise, files that carry identifiers under
    another name must not be paired by position without a word. ReportFileError naming the flag that says how."""
    refs, hyps = file_columns(ref_path), file_columns(hyp_path)
    if refs is not None and hyps is not None and "id" in refs and "id" in hyps:
        return
    ref_ids = sorted(c for c in refs or () if is_id_like(c))
    hyp_ids = sorted(c for c in hyps or () if is_id_like(c))
    if refs is not None and hyps is not None and ref_ids and hyp_ids:
        shared = [c for c in ref_ids if c in hyp_ids]
        how = f"--id-field {shared[0]}" if shared else f"--ref-id-field {ref_ids[0]} --hyp-id-field {hyp_ids[0]}"
        raise ReportFileError(
            f"{ref_path} and {hyp_path} both carry ids ({', '.join(ref_ids)}; {', '.join(hyp_ids)}) but no id field "
            f"is named: pass {how} to pair by them (or --id-field '' to pair by position)"
        )
    if (refs is None) != (hyps is None) and (ref_ids or hyp_ids):
        with_ids, column = (ref_path, ref_ids) if ref_ids else (hyp_path, hyp_ids)
        raise ReportFileError(
            f"{with_ids} carries ids ({', '.join(column)}) and the other file is plain text, which pairs by line: "
            "pass --id-field '' to pair them by position"
        )


def pair_reports(
    references: list,
    ref_ids: list[str] | None,
    candidates: list,
    cand_ids: list[str] | None,
    names: tuple[str, str] = ("references", "candidates"),
) -> tuple[list, list, list[str] | None]:
    """(references, candidates in the references' order, ids): by id when both files carry ids, by position when
    neither does. When one file has ids and the other has none, pairing by position could silently pair the wrong
    reports: refused."""
    if (ref_ids is None) != (cand_ids is None):
        has, lacks = (names[0], names[1]) if ref_ids is not None else (names[1], names[0])
        raise ReportFileError(
            f"the {has} have ids but the {lacks} have none, so they cannot be paired by id; give both files "
            "ids (--id-field, --ref-id-field / --hyp-id-field name the field), or pass --id-field '' to "
            "pair them by position"
        )
    if ref_ids is not None and cand_ids is not None:
        known_refs, known_cands = set(ref_ids), set(cand_ids)  # built once: pairing is linear in the number of ids
        missing = [i for i in ref_ids if i not in known_cands]
        extra = [i for i in cand_ids if i not in known_refs]
        if missing or extra:
            problems = (
                [f"{len(missing)} id(s) of the {names[0]} have no {names[1][:-1]} ({', '.join(missing[:10])})"]
                if missing
                else []
            ) + (
                [f"{len(extra)} id(s) of the {names[1]} are not among the {names[0]} ({', '.join(extra[:10])})"]
                if extra
                else []
            )
            raise ReportFileError("; ".join(problems))
        position = {i: n for n, i in enumerate(cand_ids)}
        return references, [candidates[position[i]] for i in ref_ids], ref_ids
    if len(references) != len(candidates):
        raise ReportFileError(
            f"{len(references)} {names[0]} but {len(candidates)} {names[1]}; without ids on both sides "
            "they pair by position and must be as many"
        )
    return references, candidates, None
