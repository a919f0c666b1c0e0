"""Report labels as a CheXpert-style CSV: the report text, the 14 CheXpert observations (1 positive, 0 negative,
-1 uncertain, blank not mentioned; `1.0`, `0.0`, `-1.0` as the CheXpert labeler writes them), an optional id and an
optional split. No Finding is 1 or blank (CheXbert's two-class head). The text column is the first of `text`,
`report`, `Report Impression` (the labeler's own output) present; the id column the first of `id`, `study_id`.

    id,text,Enlarged Cardiomediastinum,Cardiomegaly,...,Support Devices,No Finding
    r1,"Heart size is normal. No effusion.",,0,...,,1
"""

from __future__ import annotations

import csv
from pathlib import Path

from radmetrics.data_builders.corpus.splits import normalise_split_name
from radmetrics.inference.files.atomic import atomic_write
from radmetrics.inference.files.report_io import read_csv_rows
from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

from .problems import LabelFileError, Problems

TEXT_COLUMNS = ("text", "report", "Report Impression")
ID_COLUMNS = ("id", "study_id")
VALUES = {"1": 1, "1.0": 1, "0": 0, "0.0": 0, "-1": -1, "-1.0": -1, "": None}


def _columns(path: Path, header: list[str]) -> tuple[str, str | None]:
    missing = [c for c in CHEXPERT_CONDITIONS if c not in header]
    text = next((c for c in TEXT_COLUMNS if c in header), None)
    if missing or text is None:
        lacking = missing + ([] if text else [f"a text column ({' / '.join(TEXT_COLUMNS)})"])
        raise LabelFileError(f"{path}: the header lacks {', '.join(lacking)}; found {', '.join(header)}")
    return text, next((c for c in ID_COLUMNS if c in header), None)


def _labels(row: dict) -> dict | str:
    labels = {}
    for name in CHEXPERT_CONDITIONS:
        raw = (row[name] or "").strip()
        if raw not in VALUES:
            return f"{name} is {raw!r}; expected 1, 0, -1 or blank"
        labels[name] = VALUES[raw]
    if labels["No Finding"] not in (1, None):
        return f"No Finding is {labels['No Finding']}; expected 1 or blank (a two-class head)"
    return labels


def read_chexpert_csv(path: str | Path, problems: Problems) -> list[dict]:
    """Records `{"id", "text", "labels" {observation: 1 / 0 / -1 / None}, "split"?}` (the silver chexpert layout);
    bad rows go to `problems`."""
    path = Path(path)
    rows = read_csv_rows(path, path.read_text(encoding="utf-8-sig"))
    if not rows:
        return []
    text_column, id_column = _columns(path, list(rows[0][1]))
    records = []
    for line, row in rows:
        labels, text = _labels(row), row[text_column] or ""
        if isinstance(labels, str):
            problems.add(path, line, labels, "unknown_label")
            continue
        if not text.strip():
            problems.add(path, line, "the report text is empty", "empty_document")
            continue
        record = {"id": (row.get(id_column) if id_column else None) or f"{path.name}:{line}", "text": text}
        record["labels"] = labels
        if row.get("split"):
            try:
                record["split"] = normalise_split_name(row["split"])
            except ValueError as exc:
                problems.add(path, line, str(exc))
                continue
        record["_source"] = (str(path), line)
        records.append(record)
    return records


def write_chexpert_csv(records: list[dict], path: str | Path) -> None:
    """Records -> CheXpert-style CSV (id, text, split when any record has one, the 14 observations)."""
    with_split = any(r.get("split") for r in records)
    header = ["id", "text", *(["split"] if with_split else []), *CHEXPERT_CONDITIONS]
    with atomic_write(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for r in records:
            values = ["" if r["labels"][c] is None else str(r["labels"][c]) for c in CHEXPERT_CONDITIONS]
            writer.writerow([r["id"], r["text"], *([r.get("split") or ""] if with_split else []), *values])
