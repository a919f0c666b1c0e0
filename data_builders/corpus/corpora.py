"""Corpus readers: every reader returns a list of `Report` records.

Supported layouts: the IU X-ray CSV (`indiana_reports.csv`), the ReXrank/R2Gen JSON splits,
MIMIC-CXR-style free-text reports (sections found with NegBio's section titles), and CSV/JSONL
files with configurable columns. A missing file or column is a `CorpusError` naming it.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from .splits import normalise_split_name

csv.field_size_limit(1 << 24)


class CorpusError(ValueError):
    """A corpus file is missing, malformed, or lacks a required column/field."""


@dataclass
class Report:
    id: str
    findings: str
    impression: str
    source: str
    split: str | None = None  # a split the corpus itself defines (e.g. R2Gen test/valid), else None

    @property
    def text(self) -> str:
        """Findings then impression, the text every builder and metric works on."""
        return " ".join(part for part in (self.findings.strip(), self.impression.strip()) if part)

    def to_dict(self) -> dict:
        return {**asdict(self), "text": self.text}


def bundled_path(*parts: str) -> Path:
    """Path of a data file shipped inside radmetrics.data_builders (see data/*/ATTRIBUTION.md)."""
    return Path(str(resources.files("radmetrics.data_builders").joinpath("data", *parts)))


def _require_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"corpus file not found: {path}")
    return path


def _clean(value) -> str:
    if value is None:
        return ""
    text = str(value).strip()
    return "" if text.lower() in {"nan", "none", "none."} else text


def _read_csv_rows(path: Path, required: Iterable[str]) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames or []
        missing = [c for c in required if c and c not in columns]
        if missing:
            raise CorpusError(f"{path}: missing column(s) {missing}; found {columns}")
        return list(reader)


def read_iu_xray_csv(path: str | Path | None = None) -> list[Report]:
    """The Kaggle IU X-ray layout: columns uid, findings, impression (plus MeSH etc.)."""
    path = _require_file(path or bundled_path("iu_xray", "indiana_reports.csv"))
    rows = _read_csv_rows(path, ["uid", "findings", "impression"])
    return [
        Report(
            id=str(row["uid"]).strip(),
            findings=_clean(row["findings"]),
            impression=_clean(row["impression"]),
            source="iu_xray",
        )
        for row in rows
    ]


_REXRANK_KEY = re.compile(r"^CXR(\d+)_")


def read_rexrank_split(path: str | Path) -> list[Report]:
    """A ReXrank/R2Gen split file: {study_id: {section_findings, section_impression, split, ...}}.

    Study ids like `CXR2384_IM-0942` map to IU uid `2384`.
    """
    path = _require_file(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not valid JSON ({exc})") from exc
    reports = []
    for key, record in data.items():
        for field_name in ("section_findings", "section_impression"):
            if field_name not in record:
                raise CorpusError(f"{path}: record {key!r} lacks the field {field_name!r}")
        match = _REXRANK_KEY.match(key)
        reports.append(
            Report(
                id=match.group(1) if match else key,
                findings=_clean(record["section_findings"]),
                impression=_clean(record["section_impression"]),
                source="iu_xray_rexrank",
                split=normalise_split_name(record.get("split", path.stem.rsplit("_", 1)[-1])),
            )
        )
    return reports


def iu_xray_corpus(directory: str | Path | None = None, drop_empty: bool = True) -> list[Report]:
    """All IU X-ray reports, with the R2Gen test/validation split attached; the rest are train.

    `directory` holds indiana_reports.csv and rexrank_iu_xray_{test,valid}.json (default: the bundled copy).
    """
    directory = Path(directory) if directory else bundled_path("iu_xray")
    reports = read_iu_xray_csv(directory / "indiana_reports.csv")
    predefined = {}
    for name in ("rexrank_iu_xray_test.json", "rexrank_iu_xray_valid.json"):
        for rec in read_rexrank_split(directory / name):
            predefined[rec.id] = rec.split
    for rep in reports:
        rep.split = predefined.get(rep.id, "train")
    return [r for r in reports if r.text] if drop_empty else reports


def load_section_titles(path: str | Path | None = None) -> list[str]:
    path = _require_file(path or bundled_path("negbio", "section_titles.txt"))
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_sections(text: str, titles: list[str]) -> dict[str, str]:
    """Split a free-text report into {TITLE: body} at the known section titles (case-insensitive).

    A title counts only at the start of a line or after a sentence end, so "no findings:" mid-sentence
    is rare to misfire; text before the first title goes under "".
    """
    names = sorted({t.rstrip(":").strip() for t in titles if t.strip()}, key=len, reverse=True)
    pattern = re.compile(
        r"(?:(?<=\n)|(?<=^)|(?<=[.\n]\s))\s*(" + "|".join(re.escape(n) for n in names) + r")\s*:",
        re.IGNORECASE,
    )
    sections: dict[str, str] = {}
    matches = list(pattern.finditer(text))
    head = text[: matches[0].start()] if matches else text
    if head.strip():
        sections[""] = head.strip()
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = " ".join(text[m.end() : end].split())
        key = m.group(1).upper()
        sections[key] = f"{sections[key]} {body}".strip() if key in sections else body
    return sections


def parse_free_text_report(report_id: str, text: str, titles: list[str], source: str = "free_text") -> Report:
    sections = split_sections(text, titles)
    findings = sections.get("FINDINGS", "")
    impression = sections.get("IMPRESSION", "") or sections.get("CONCLUSION", "")
    return Report(id=report_id, findings=findings, impression=impression, source=source)


def read_free_text_reports(
    paths: str | Path | Iterable[str | Path], section_titles: str | Path | None = None
) -> list[Report]:
    """MIMIC-CXR-style report files (one report per .txt; a directory is searched recursively).

    The report id is the file stem. Reports where neither FINDINGS nor IMPRESSION is found are kept
    with empty text, so callers can count them; `Report.text` is then empty.
    """
    titles = load_section_titles(section_titles)
    if isinstance(paths, (str, Path)):
        root = Path(paths)
        if root.is_dir():
            files = sorted(root.rglob("*.txt"))
            if not files:
                raise CorpusError(f"{root}: no .txt report files found")
        else:
            files = [_require_file(root)]
    else:
        files = [_require_file(p) for p in paths]
    reports = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{f}: not UTF-8 text ({exc})") from exc
        reports.append(parse_free_text_report(f.stem, text, titles, source="mimic_free_text"))
    return reports


def read_table(
    path: str | Path,
    id_column: str | None = "id",
    findings_column: str | None = "findings",
    impression_column: str | None = "impression",
    text_column: str | None = None,
    split_column: str | None = None,
    source: str | None = None,
) -> list[Report]:
    """CSV or JSONL with configurable columns.

    Either `text_column` (the whole report, stored as findings) or findings/impression columns.
    Without an id column, the row number is the id.
    """
    path = _require_file(path)
    wanted = [c for c in (id_column, split_column) if c] + (
        [text_column] if text_column else [c for c in (findings_column, impression_column) if c]
    )
    if path.suffix.lower() in {".jsonl", ".json"}:
        from radmetrics.inference.files.report_io import ReportFileError, read_jsonl_records

        try:
            rows = [row for _, row in read_jsonl_records(path, wanted)]
        except ReportFileError as exc:
            raise CorpusError(str(exc)) from exc
    else:
        rows = _read_csv_rows(path, wanted)
    reports = []
    for n, row in enumerate(rows):
        rid = str(row[id_column]) if id_column else str(n)
        if text_column:
            findings, impression = _clean(row[text_column]), ""
        else:
            findings = _clean(row[findings_column]) if findings_column else ""
            impression = _clean(row[impression_column]) if impression_column else ""
        split = normalise_split_name(row[split_column]) if split_column else None
        reports.append(Report(rid, findings, impression, source or path.stem, split))
    return reports


def load_corpus(kind: str = "iu_xray", path: str | Path | None = None, **options) -> list[Report]:
    """Dispatch by corpus kind: iu_xray | rexrank | free_text | table."""
    if kind == "iu_xray":
        return iu_xray_corpus(path)
    if kind == "rexrank":
        if path is None:
            raise CorpusError("corpus kind 'rexrank' needs a path to a ReXrank split JSON")
        return read_rexrank_split(path)
    if kind == "free_text":
        if path is None:
            raise CorpusError("corpus kind 'free_text' needs a report file or directory")
        return read_free_text_reports(path, options.get("section_titles"))
    if kind == "table":
        if path is None:
            raise CorpusError("corpus kind 'table' needs a CSV or JSONL path")
        return read_table(path, **options)
    raise CorpusError(f"unknown corpus kind {kind!r}; expected iu_xray, rexrank, free_text or table")
