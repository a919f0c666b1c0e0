"""Write a loaded corpus with its splits, and describe it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from radmetrics.inference.files.atomic import atomic_directory, atomic_write

from .corpora import Report
from .leakage import split_overlap
from .splits import text_split

SPLIT_METHODS = ("text", "predefined")


def assign_splits(reports: list[Report], how: str = "text", ratios=(0.8, 0.1, 0.1), seed: int = 0) -> dict[str, str]:
    """report id -> split.

    'text' (default): a seeded hash of the normalised report text (see splits.py), 80/10/10
    by default, so reports with the same text share a split and no test report repeats a train report.
    'predefined': the corpus' own split, which may repeat reports across splits (the stats measure it)."""
    if how == "hash":
        raise ValueError(
            "split method 'hash' (a hash of the report id) was removed: it put reports repeated word for "
            "word in both train and test; use 'text' (the default), which keeps identical reports together"
        )
    if how == "text":
        return {r.id: text_split(r.text, ratios, seed) for r in reports}
    if how == "predefined":
        missing = [r.id for r in reports if not r.split]
        if missing:
            raise ValueError(
                f"{len(missing)} reports have no predefined split (first: {missing[0]}); use --split-by text"
            )
        return {r.id: r.split for r in reports}
    raise ValueError(f"unknown split method {how!r}; expected one of {list(SPLIT_METHODS)}")


def texts_by_split(reports: list[Report], splits: dict[str, str]) -> dict[str, list[str]]:
    by_split: dict[str, list[str]] = {}
    for r in reports:
        by_split.setdefault(splits[r.id], []).append(r.text)
    return by_split


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
        "split_overlap": split_overlap(texts_by_split(reports, splits)),
    }
    (out / "corpus_stats.json").write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return stats


def write_split_records(
    by_split: dict[str, list[dict]], out_dir: str | Path, jsonl: bool = True, to_arrow=None
) -> None:
    """`{split}.jsonl` per split (optional) and the same records as an HF DatasetDict under `hf/`, each published
    whole (inference/files/atomic.py).

    `to_arrow` rewrites a record for Arrow where JSONL's mixed-type lists (`[start, end, "LABEL"]`) cannot go."""
    from datasets import Dataset, DatasetDict

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if jsonl:
        for split, records in by_split.items():
            with atomic_write(out / f"{split}.jsonl", "w") as fh:
                for record in records:
                    fh.write(json.dumps(record) + "\n")
    convert = to_arrow or (lambda record: record)
    with atomic_directory(out / "hf") as staging:
        DatasetDict(
            {split: Dataset.from_list([convert(r) for r in records]) for split, records in by_split.items()}
        ).save_to_disk(str(staging))
