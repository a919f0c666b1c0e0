"""Which labels a user's records may carry, and the label set written beside them (`LABELS_FILE`), which the recipes
train, the export's manifest and card record, and scoring uses.

By default a record's labels must come from the component's schema (RaTE's five entity types, RadGraph's four entity
and three relation labels): anything else is an unknown label, refused with its file and line (a typo such as
ABNORMALTY never becomes a class). `--labels` names the allowed set; `--labels-from-data` takes whatever the data
holds: the schema's labels it uses, in schema order, then the others sorted.
"""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.inference.files.atomic import write_text
from radmetrics.inference.loading.components import (
    CHEXPERT_CONDITIONS,
    RADGRAPH_ENTITY_LABELS,
    RADGRAPH_RELATION_LABELS,
    RATE_ENTITY_TYPES,
)

from .problems import Problems

LABELS_FILE = "labels.json"
DEFAULTS = {
    "rate_ner": {"entity_types": RATE_ENTITY_TYPES},
    "radgraph": {"entities": RADGRAPH_ENTITY_LABELS, "relations": RADGRAPH_RELATION_LABELS},
    "chexpert": {"conditions": CHEXPERT_CONDITIONS},
}


def record_labels(labeler: str, record: dict) -> dict[str, list[str]]:
    """The labels one record uses, per label-set key."""
    if labeler == "rate_ner":
        return {"entity_types": [s[2] for s in record["spans"]]}
    if labeler == "radgraph":
        return {
            "entities": [e[2] for sentence in record["ner"] for e in sentence],
            "relations": [r[4] for sentence in record["relations"] for r in sentence],
        }
    return {"conditions": []}  # the CSV reader checks the 14 observations and their values


def from_data(labeler: str, records: list[dict]) -> dict[str, list[str]]:
    """Per key: the schema's labels the records use, in schema order, then the others sorted."""
    found: dict[str, set[str]] = {key: set() for key in DEFAULTS[labeler]}
    for record in records:
        for key, labels in record_labels(labeler, record).items():
            found[key].update(labels)
    if labeler == "chexpert":
        return {"conditions": list(CHEXPERT_CONDITIONS)}
    return {
        key: [x for x in DEFAULTS[labeler][key] if x in found[key]] + sorted(found[key] - set(DEFAULTS[labeler][key]))
        for key in found
    }


def allowed_labels(labeler: str, records: list[dict], declared: list[str] | None, use_data: bool) -> dict:
    """The label set of an import: declared (`--labels`; entity labels only), read from the data, or the schema's."""
    if use_data:
        return from_data(labeler, records)
    sets = {key: list(labels) for key, labels in DEFAULTS[labeler].items()}
    if declared:
        first = next(iter(sets))
        sets[first] = list(dict.fromkeys(declared))
    return sets


def check_labels(labeler: str, records: list[dict], label_set: dict, problems: Problems) -> list[dict]:
    """The records whose labels all belong to `label_set`; each other record is a problem naming its labels."""
    kept = []
    for record in records:
        unknown = sorted(
            {x for key, labels in record_labels(labeler, record).items() for x in labels if x not in label_set[key]}
        )
        if unknown:
            where = record.get("_source", ("?", 0))
            problems.add(*where, f"unknown label(s) {unknown}; known: {_known(label_set)}", "unknown_label")
        else:
            kept.append(record)
    return kept


def _known(label_set: dict) -> str:
    return "; ".join(f"{key} {', '.join(labels)}" for key, labels in label_set.items())


def write_label_set(folder: Path, label_set: dict) -> None:
    write_text(folder / LABELS_FILE, json.dumps(label_set, indent=2) + "\n")


def read_label_set(folder: str | Path, labeler: str) -> dict[str, list[str]]:
    """The label set an import wrote into `folder` (DIR/<labeler>/), else the schema's (silver labels)."""
    path = Path(folder) / LABELS_FILE
    if not path.is_file():
        return {key: list(labels) for key, labels in DEFAULTS[labeler].items()}
    return json.loads(path.read_text(encoding="utf-8"))
