"""Domain-pretraining corpus (GREEN section 3.1.2, stage 1): findings + impression text, de-duplicated.

Duplicates are detected on normalised text (splits.normalise_report_text), so boilerplate normal reports
that recur hundreds of times in real corpora count once. The result is an HF `datasets.DatasetDict` with a
`text` column per split (the splits given, by default grouped by normalised text), ready for tokenisation
and packing.
"""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.inference.files import atomic

from .corpora import Report
from .corpus_io import write_split_records
from .leakage import overlap_card_section, split_overlap
from .splits import normalise_report_text


def dedupe_texts(reports: list[Report], splits: dict[str, str]) -> dict[str, list[dict]]:
    """The first report of each normalised text, in its split."""
    seen: set[str] = set()
    by_split: dict[str, list[dict]] = {}
    for report in reports:
        key = normalise_report_text(report.text)
        if not report.text or key in seen:
            continue
        seen.add(key)
        by_split.setdefault(splits[report.id], []).append(
            {"id": report.id, "text": report.text, "source": report.source}
        )
    return by_split


def write_pretrain_corpus(
    reports: list[Report], splits: dict[str, str], out_dir: str | Path, provenance: dict
) -> dict:
    out = Path(out_dir)
    by_split = dedupe_texts(reports, splits)
    write_split_records(by_split, out, jsonl=False)
    stats = {
        "reports_in": len(reports),
        "unique_texts": sum(len(v) for v in by_split.values()),
        "per_split": {s: len(v) for s, v in by_split.items()},
        "words": sum(len(r["text"].split()) for rows in by_split.values() for r in rows),
        "provenance": provenance,
    }
    overlap = split_overlap({s: [r["text"] for r in rows] for s, rows in by_split.items()})
    atomic.write_text(out / "stats.json", json.dumps({**stats, "split_overlap": overlap}, indent=2))
    (out / "README.md").write_text(
        "# radmetrics domain-pretraining corpus\n\nFindings + impression text, de-duplicated on normalised text, "
        f"in the splits of the provenance below.\n\n```json\n{json.dumps(stats, indent=2)}\n```\n\n"
        f"{overlap_card_section(overlap)}",
        encoding="utf-8",
    )
    return {**stats, "split_overlap": overlap}
