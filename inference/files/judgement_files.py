"""Human judgements users bring to `radmetrics meta-eval`: CSV rows with named columns, numbers, preference votes,
and JSONL rows of entity lists. Every fault is a ReportFileError naming the file and row."""

from __future__ import annotations

from pathlib import Path

from .report_io import ReportFileError, read_csv_rows, read_jsonl_records, read_text_file


def read_rows(path: str, required: list[str]) -> list[tuple[int, dict]]:
    """(line, row) of every row of a UTF-8 CSV file that has every `required` column, read as strictly as report
    files are (report_io.read_csv_rows): an unclosed quote or a row with more fields than the header is refused."""
    rows = read_csv_rows(Path(path), read_text_file(Path(path)))
    if not rows:
        raise ReportFileError(f"{path}: no rows")
    missing = [c for c in required if c not in rows[0][1]]
    if missing:
        raise ReportFileError(f"{path}: missing column(s) {missing}; found {list(rows[0][1])}")
    return rows


def number_column(rows: list[tuple[int, dict]], column: str, path: str) -> list[float]:
    """`column` of every (line, row) as a number."""
    values = []
    for line, row in rows:
        try:
            values.append(float(row[column]))
        except (TypeError, ValueError):
            raise ReportFileError(f"{path}: line {line}: {column} is {row[column]!r}, not a number") from None
    return values


def preference_vote(value: str, path: str, line: int) -> int:
    """A rater's preference cell: 1 or 2 for a candidate, 0 for a tie ("0", "tie" or empty)."""
    text = str(value).strip().lower()
    if text in ("1", "2"):
        return int(text)
    if text in ("0", "tie", ""):
        return 0
    raise ReportFileError(f"{path}: line {line}: preference {value!r} is not 1, 2, 0 or 'tie'")


def read_entity_rows(path: str, human_column: str) -> list[dict]:
    """JSONL rows with reference_entities, candidate_entities and the human column; at least 3 to rank."""
    rows = [r for _, r in read_jsonl_records(path, ("reference_entities", "candidate_entities", human_column))]
    if len(rows) < 3:
        raise ReportFileError(f"{path}: need at least 3 rated pairs to rank, found {len(rows)}")
    return rows
