"""Write a loaded corpus with its splits, and describe it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .corpora import Report
from .splits import hash_split


def assign_splits(reports: list[Report], how: str = "hash", ratios=(0.8, 0.1, 0.1), seed: int = 0) -> dict[str, str]:
    """report id -> split. 'hash': seeded hash of the id (80/10/10 by default); 'predefined': the corpus' own."""
    if how == "hash":
        return {r.id: hash_split(r.id, ratios, seed) for r in reports}
    if how == "predefined":
        missing = [r.id for r in reports if not r.split]
        if missing:
            raise ValueError(f"{len(missing)} reports have no predefined split (first: {missing[0]}); use --split-by hash")
        return {r.id: r.split for r in reports}
    raise ValueError(f"unknown split method {how!r}; expected 'hash' or 'predefined'")


def write_corpus(reports: list[Report], splits: dict[str, str], out_dir: str | Path) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "reports.jsonl", "w", encoding="utf-8") as fh:
        for r in reports:
            fh.write(json.dumps({**r.to_dict(), "split": splits[r.id]}) + "\n")
    stats = {
        "reports": len(reports),
        "per_split": dict(Counter(splits[r.id] for r in reports)),
        "with_findings": sum(bool(r.findings) for r in reports),
        "with_impression": sum(bool(r.impression) for r in reports),
        "sources": dict(Counter(r.source for r in reports)),
    }
    (out / "corpus_stats.json").write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return stats


def write_split_records(by_split: dict[str, list[dict]], out_dir: str | Path, jsonl: bool = True, to_arrow=None) -> None:
    """`{split}.jsonl` per split (optional) and the same records as an HF DatasetDict under `hf/`.

    `to_arrow` rewrites a record for Arrow where JSONL's mixed-type lists (`[start, end, "LABEL"]`) cannot go."""
    from datasets import Dataset, DatasetDict

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if jsonl:
        for split, records in by_split.items():
            with open(out / f"{split}.jsonl", "w", encoding="utf-8") as fh:
                for record in records:
                    fh.write(json.dumps(record) + "\n")
    convert = to_arrow or (lambda record: record)
    DatasetDict({split: Dataset.from_list([convert(r) for r in records])
                 for split, records in by_split.items()}).save_to_disk(str(out / "hf"))
