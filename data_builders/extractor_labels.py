"""Silver labels for the findings extractor: which statements and clauses of a report are findings.

Source: the IU X-ray corpus (`indiana_reports.csv`), whose `MeSH` column holds NLM's manual codes of each report's
findings ("Opacity/lung/base/left/mild", or "normal"). Never RadPref. Each code is read as words, modifiers first
("mild left base lung opacity"); every statement of the report's findings and impression, and every clause of it
(`inference.findings.extractor.clauses`), is embedded with the bundled MiniLM and compared with the report's codes:

- a candidate is a finding (label 1) when its best cosine with one of the codes reaches `positive_at` and it is not a
  normal statement;
- it is not one (label 0) when the report is coded `normal`, or its best cosine stays under `negative_below`;
- anything between is left out (the alignment cannot tell).

Deduplicated before splitting: the split of a candidate is that of its normalised text (`text_split`), so one sentence
("No pneumothorax") never sits in two splits. Records: {"text", "label", "kind" (statement or clause), "report_id",
"best_code", "cosine", "split"}.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from radmetrics.inference.files import atomic
from radmetrics.inference.findings.extractor import clauses
from radmetrics.inference.text.sentences import statements

from .corpus.corpora import bundled_path
from .corpus.splits import text_split

NORMAL_CODE = "normal"


@dataclass
class FindingsSilverArguments:
    corpus_csv: str | None = field(
        default=None, metadata={"help": "an IU X-ray CSV with uid, MeSH, findings, impression (default: the bundled)"}
    )
    max_reports: int | None = field(default=None, metadata={"help": "the first N reports only (tiny runs)"})
    positive_at: float = field(default=0.5, metadata={"help": "cosine with a MeSH code from which a candidate is one"})
    negative_below: float = field(default=0.35, metadata={"help": "cosine under which a candidate is not a finding"})


def code_words(code: str) -> str:
    """A MeSH code as words, modifiers first: "Opacity/lung/base/left/mild" -> "mild left base lung Opacity"."""
    parts = [p.strip() for p in code.split("/") if p.strip()]
    return " ".join([*reversed(parts[1:]), parts[0]]) if parts else ""


def read_coded_reports(path: str | Path | None = None, max_reports: int | None = None) -> list[dict]:
    """[{"id", "text", "codes"}] of the corpus's reports that have text; codes [] for a report coded normal."""
    path = Path(path) if path else bundled_path("iu_xray", "indiana_reports.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    missing = {"uid", "MeSH", "findings", "impression"} - set(rows[0] if rows else ())
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
    reports = []
    for row in rows:
        sections = [row[k].strip() for k in ("findings", "impression") if row[k] and row[k].strip().lower() != "none."]
        text = " ".join(s for s in sections if s.lower() not in ("nan", "none"))
        if not text:
            continue
        mesh = row["MeSH"].strip()
        codes = [] if mesh.lower() in (NORMAL_CODE, "") else [code_words(c) for c in mesh.split(";") if c.strip()]
        reports.append({"id": str(row["uid"]), "text": text, "codes": [c for c in codes if c]})
        if max_reports and len(reports) >= max_reports:
            break
    return reports


def label_candidates(reports: list[dict], encoder, args: FindingsSilverArguments, progress: bool = True) -> list[dict]:
    """The silver records of every statement and clause of `reports` (module docstring)."""
    from radmetrics.inference.text import word_rules as rules

    candidates = []
    for report in reports:
        for statement in statements(report["text"]):
            parts = clauses(statement)
            candidates.append((report, statement, "statement"))
            if len(parts) >= 2:
                candidates.extend((report, part, "clause") for part in parts)
    texts = sorted({t for _, t, _ in candidates} | {c for r in reports for c in r["codes"]})
    vectors = dict(zip(texts, encoder.encode(texts, batch_size=128, progress=progress, desc="silver findings")))
    records, seen = [], set()
    for report, text, kind in candidates:
        if (report["id"], text) in seen:
            continue
        seen.add((report["id"], text))
        best, cosine = None, -1.0
        if report["codes"]:
            scores = np.stack([vectors[c] for c in report["codes"]]) @ vectors[text]
            index = int(np.argmax(scores))
            best, cosine = report["codes"][index], float(scores[index])
        if best is not None and cosine >= args.positive_at and not rules.is_normal(text):
            label = 1
        elif best is None or cosine < args.negative_below:
            label = 0
        else:
            continue
        records.append(
            {
                "text": text,
                "label": label,
                "kind": kind,
                "report_id": report["id"],
                "best_code": best,
                "cosine": round(cosine, 4),
                "split": text_split(text),
            }
        )
    return records


def build_findings_silver(args: FindingsSilverArguments, encoder, out_dir: str | Path | None = None) -> dict:
    """{split: [records]} and, with `out_dir`, findings_{train,validation,test}.jsonl and provenance.json written."""
    reports = read_coded_reports(args.corpus_csv, args.max_reports)
    records = label_candidates(reports, encoder, args)
    splits = {name: [r for r in records if r["split"] == name] for name in ("train", "validation", "test")}
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, rows in splits.items():
            with atomic.atomic_write(out / f"findings_{name}.jsonl") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        record = json.dumps(provenance(args, reports, splits), indent=2) + "\n"
        atomic.write_text(out / "findings_provenance.json", record)
    return splits


def provenance(args: FindingsSilverArguments, reports: list[dict], splits: dict) -> dict:
    return {
        "source": "IU X-ray (Open-i; Demner-Fushman et al. 2016): NLM's manual MeSH codes of each report",
        "corpus": args.corpus_csv or "bundled indiana_reports.csv",
        "reports": len(reports),
        "rule": f"finding when cosine with a MeSH code >= {args.positive_at} and not normal; not one when coded "
        f"normal or cosine < {args.negative_below}; the bundled all-MiniLM-L6-v2",
        "split": "by the candidate's normalised text (deduplicated before splitting)",
        "counts": {
            name: {"records": len(rows), "findings": sum(r["label"] for r in rows)} for name, rows in splits.items()
        },
        "radpref": "not used",
    }


def load_findings_silver(directory: str | Path) -> dict[str, list[dict]]:
    directory = Path(directory)
    splits = {}
    for name in ("train", "validation", "test"):
        path = directory / f"findings_{name}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: build it with `radmetrics data findings --out {directory}`")
        splits[name] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return splits
