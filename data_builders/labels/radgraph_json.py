"""RadGraph's JSON (the PhysioNet release's train.json / dev.json, and the radgraph package's output): one object
keyed by report, each with `text` (words separated by spaces), `entities` {id: {tokens, label, start_ix, end_ix
(word indices, inclusive), relations [[label, target id]]}} and an optional `data_split`. A document whose entities
sit under `labeler_1` (the test set's two annotators) is read from `labeler_1`.

    {"report_1": {"text": "Small left effusion .", "data_split": "train", "entities": {
      "1": {"tokens": "Small", "label": "OBS-DP", "start_ix": 0, "end_ix": 0, "relations": [["modify", "3"]]},
      "2": {"tokens": "left", "label": "ANAT-DP", "start_ix": 1, "end_ix": 1, "relations": []},
      "3": {"tokens": "effusion", "label": "OBS-DP", "start_ix": 2, "end_ix": 2, "relations": [["located_at", "2"]]}
    }}}
"""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.data_builders.corpus.splits import normalise_split_name
from radmetrics.inference.files.atomic import write_text
from radmetrics.inference.metrics.radgraph.annotation import dygie_to_annotation

from .graph_records import graph_document
from .problems import Problems


def _line_of(text: str, key: str) -> int:
    at = text.find(json.dumps(key) + ":")
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _entity(words: list[str], entity) -> tuple[int, int, str] | str:
    if not isinstance(entity, dict) or not {"label", "start_ix", "end_ix"} <= set(entity):
        return "an entity needs label, start_ix and end_ix"
    start, end, label = entity["start_ix"], entity["end_ix"], entity["label"]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end < len(words)):
        return f"start_ix {start} / end_ix {end} are not word indices of the {len(words)} words of 'text'"
    if "tokens" in entity and str(entity["tokens"]).split() != words[start : end + 1]:
        return f"tokens {entity['tokens']!r} are not the words {start}-{end} of 'text' ({words[start : end + 1]})"
    return start, end, str(label)


def _document(path: Path, key: str, doc, line: int, problems: Problems) -> dict | None:
    entities = doc.get("entities", (doc.get("labeler_1") or {}).get("entities")) if isinstance(doc, dict) else None
    if not isinstance(doc.get("text") if isinstance(doc, dict) else None, str) or not isinstance(entities, dict):
        problems.add(path, line, f"document {key!r} needs 'text' and an 'entities' object")
        return None
    words, spans, relations = doc["text"].split(), {}, []
    for entity_id, entity in entities.items():
        found = _entity(words, entity)
        if isinstance(found, str):
            problems.add(path, line, f"document {key!r} entity {entity_id}: {found}")
            return None
        spans[str(entity_id)] = found
        for relation in entity.get("relations") or []:
            if not (isinstance(relation, list) and len(relation) == 2):
                problems.add(path, line, f"document {key!r} entity {entity_id}: a relation is [label, target id]")
                return None
            relations.append((str(entity_id), str(relation[1]), str(relation[0]), line))
    document = graph_document(key, words, spans, relations, (str(path), line), problems)
    split = doc.get("data_split")
    if document and split and split != "inference":
        try:
            document["split"] = normalise_split_name(split)
        except ValueError as exc:
            problems.add(path, line, f"document {key!r}: {exc}")
            return None
    return document


def read_radgraph_json(path: str | Path, problems: Problems) -> list[dict]:
    """DyGIE documents (graph_records.py) from a RadGraph JSON file; bad documents go to `problems`."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(path, exc.lineno, f"not JSON ({exc.msg})")
        return []
    if not isinstance(data, dict):
        problems.add(path, 1, "RadGraph JSON is one object keyed by report id")
        return []
    documents = [_document(path, str(key), doc, _line_of(text, str(key)), problems) for key, doc in data.items()]
    return [d for d in documents if d]


def write_radgraph_json(documents: list[dict], path: str | Path) -> None:
    """DyGIE documents -> RadGraph JSON (entities numbered in span order; `data_split` kept)."""
    out = {}
    for doc in documents:
        annotation = dygie_to_annotation(doc)
        annotation.pop("data_source")
        annotation["data_split"] = doc.get("split") or "inference"
        out[doc["doc_key"]] = annotation
    write_text(path, json.dumps(out, indent=1) + "\n")
