"""Splits of a user's labels, made by report: every record of a report lands in one split. Splits given in the data
(a record's `split`, or one per file with `--file-splits`) are kept and checked: a report spread over two splits and a
held-out report whose text repeats a train report (after normalisation, data_builders/corpus/splits.py) are refused
unless `--allow-leakage`. When no split is given, reports are split 80/10/10 by a seeded hash of their normalised
text, so identical reports share a split."""

from __future__ import annotations

from radmetrics.data_builders.corpus.leakage import split_overlap
from radmetrics.data_builders.corpus.splits import SPLITS, text_split

from .problems import LabelFileError

REPORT_FIELD = {"rate_ner": "report_id", "radgraph": "doc_key", "chexpert": "id"}


def report_of(labeler: str, record: dict) -> str:
    return record[REPORT_FIELD[labeler]]


def record_text(labeler: str, record: dict) -> str:
    if labeler == "rate_ner":
        return " ".join(record["tokens"])
    if labeler == "radgraph":
        return " ".join(t for sentence in record["sentences"] for t in sentence)
    return record["text"]


def report_texts(labeler: str, records: list[dict]) -> dict[str, str]:
    """report -> its text (a report's sentences joined in order)."""
    texts: dict[str, list[str]] = {}
    for record in records:
        texts.setdefault(report_of(labeler, record), []).append(record_text(labeler, record))
    return {report: " ".join(parts) for report, parts in texts.items()}


def _given_splits(labeler: str, records: list[dict]) -> dict[str, str] | None:
    """report -> split from the records, None when no record names one; LabelFileError when only some do or a
    report is spread over splits."""
    named = [r for r in records if r.get("split")]
    if not named:
        return None
    if len(named) != len(records):
        first = next(r for r in records if not r.get("split"))
        raise LabelFileError(
            f"{len(records) - len(named)} of {len(records)} records name no split (first: {_where(first)}): give "
            "every record a split, or none (then reports are split by text)"
        )
    splits: dict[str, str] = {}
    for record in records:
        report = report_of(labeler, record)
        if splits.setdefault(report, record["split"]) != record["split"]:
            raise LabelFileError(
                f"report {report!r} has records in {splits[report]} and {record['split']} ({_where(record)}): a "
                "report's records must share one split, or its sentences leak from train into held-out data"
            )
    return splits


def _where(record: dict) -> str:
    path, line = record.get("_source", ("?", 0))
    return f"{path}:{line}"


def assign_splits(
    labeler: str, records: list[dict], ratios=(0.8, 0.1, 0.1), seed: int = 0
) -> tuple[dict[str, list[dict]], str]:
    """(split -> records, how the splits were made)."""
    texts = report_texts(labeler, records)
    given = _given_splits(labeler, records)
    splits = given or {report: text_split(text, ratios, seed) for report, text in texts.items()}
    by_split: dict[str, list[dict]] = {split: [] for split in SPLITS}
    for record in records:
        by_split.setdefault(splits[report_of(labeler, record)], []).append(record)
    empty = [split for split in SPLITS if not by_split[split]]
    if empty:
        raise LabelFileError(
            f"{', '.join(empty)} would hold no report ({len(texts)} reports in all): give each record a split "
            "(a 'split' field or --file-splits), or change --split-ratios"
        )
    return by_split, "given" if given else f"by report text (seed {seed}, ratios {list(ratios)})"


def check_leakage(labeler: str, by_split: dict[str, list[dict]], allow: bool) -> dict:
    """split_overlap of the reports per split; LabelFileError when a held-out report repeats a train report, unless
    `allow`."""
    texts = {split: list(report_texts(labeler, records).values()) for split, records in by_split.items()}
    overlap = split_overlap(texts)
    leaked = {s: v["reports_in_train"] for s, v in overlap["per_split"].items() if v.get("reports_in_train")}
    if leaked and not allow:
        counts = ", ".join(f"{n} {split}" for split, n in leaked.items())
        raise LabelFileError(
            f"held-out reports repeat train reports word for word after normalisation ({counts}): move them into "
            "one split, or pass --allow-leakage to keep them (the card records the overlap)"
        )
    return overlap
