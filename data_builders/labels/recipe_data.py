"""What a recipe checks in `--silver_dir` before any model loads: the three splits, the columns it reads, and every
row's labels against the label set (labels.json beside the data, else the schema's), so that a DatasetDict made by
hand fails here in one line naming each bad row, not after training (a missing `id`) or in a label lookup."""

from __future__ import annotations

from pathlib import Path

from .label_sets import read_label_set
from .problems import LabelFileError
from .token_records import tag_problem

SPLITS = ("train", "validation", "test")
COLUMNS = {
    "rate_ner": ("id", "report_id", "tokens", "ner_tags", "spans"),
    "radgraph": ("doc_key", "sentences", "ner", "relations"),
    "chexpert": ("id", "text", "labels"),
}


def _ner_problem(row: dict, types: set[str]) -> str | None:
    tokens, tags = row["tokens"], row["ner_tags"]
    if not tokens or len(tags) != len(tokens):
        return f"{len(tokens)} tokens but {len(tags)} tags"
    bad = next((tag_problem(t) for t in tags if tag_problem(t)), None)
    unknown = sorted(({t[2:] for t in tags if t != "O"} | {s["label"] for s in row["spans"]}) - types)
    return bad or (f"unknown entity type(s) {unknown}" if unknown else None)


def _graph_problem(row: dict, entities: set[str], relations: set[str]) -> str | None:
    found = {e["label"] for sentence in row["ner"] for e in sentence} - entities
    linked = {r["label"] for sentence in row["relations"] for r in sentence} - relations
    if found or linked:
        return f"unknown label(s) {sorted(found | linked)}"
    return None if any(row["sentences"]) else "no tokens"


def _chexpert_problem(row: dict, conditions: list[str]) -> str | None:
    labels = row["labels"] or {}
    bad = [c for c in conditions if labels.get(c, "missing") not in (1, 0, -1, None)]
    return f"observation(s) {bad} missing or not 1 / 0 / -1 / null" if bad else None


def _row_problem(labeler: str, label_set: dict):
    if labeler == "rate_ner":
        types = set(label_set["entity_types"])
        return lambda row: _ner_problem(row, types)
    if labeler == "radgraph":
        entities, relations = set(label_set["entities"]), set(label_set["relations"])
        return lambda row: _graph_problem(row, entities, relations)
    return lambda row: _chexpert_problem(row, label_set["conditions"])


def check_recipe_data(data, labeler: str, hf_dir: str | Path) -> dict:
    """The label set of the data in `hf_dir` (a DatasetDict loaded from it); LabelFileError on a missing split or
    column or any bad row."""
    missing = [s for s in SPLITS if s not in data]
    if missing:
        raise LabelFileError(f"{hf_dir}: no {', '.join(missing)} split (found {', '.join(data)})")
    for split in SPLITS:
        lacking = [c for c in COLUMNS[labeler] if c not in data[split].column_names]
        if lacking:
            raise LabelFileError(
                f"{hf_dir}/{split}: no column(s) {', '.join(lacking)} (a {labeler} row has "
                f"{', '.join(COLUMNS[labeler])}; `radmetrics data import` writes them)"
            )
    label_set = read_label_set(Path(hf_dir).parent, labeler)
    problem = _row_problem(labeler, label_set)
    bad = [
        f"{split} row {n}: {why}"
        for split in SPLITS
        for n, row in enumerate(data[split].select_columns(list(COLUMNS[labeler])))
        if (why := problem(row))
    ]
    if bad:
        raise LabelFileError(f"{hf_dir}: {len(bad)} bad row(s): {'; '.join(bad)}")
    return label_set


def import_provenance(root: str | Path) -> dict:
    """What `radmetrics data import` recorded about the data in `root` (its format, files, splits and the records it
    left out with --drop-bad), for the run's provenance; {} for silver labels."""
    import json

    path = Path(root) / "stats.json"
    stats = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if "format" not in stats:
        return {}
    keep = ("format", "splits", "records_per_split", "dropped", "dropped_records")
    return {"imported_labels": {**{k: stats[k] for k in keep}, "files": stats["options"]["files"]}}
