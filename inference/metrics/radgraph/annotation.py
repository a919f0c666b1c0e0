"""The radgraph package's annotation dict, and conversion from DyGIE predictions.

Annotation dict (Stanford-AIMI/radgraph `RadGraph.__call__` output, one per report):
`{"text": ..., "entities": {"1": {"tokens", "label", "start_ix", "end_ix", "relations": [[rel, id]]}},
"data_source": None, "data_split": "inference"}`. RadGraph-XL writes labels as
"Observation::definitely absent"; `short_label` maps them to the original schema (OBS-DA).
"""

from __future__ import annotations

XL_LABELS = {
    "Anatomy::definitely present": "ANAT-DP",
    "Observation::definitely present": "OBS-DP",
    "Observation::uncertain": "OBS-U",
    "Observation::definitely absent": "OBS-DA",
}


def short_label(label: str) -> str:
    return XL_LABELS.get(label, label)


def dygie_document(doc_key: str, sentences) -> dict:
    """A DyGIE document from (words, entities [start, end, label], relations [s1, e1, s2, e2, label]) per
    sentence, indices sentence-level; the document's indices are document-level, inclusive."""
    doc: dict = {"doc_key": doc_key, "sentences": [], "ner": [], "relations": []}
    offset = 0
    for words, entities, relations in sentences:
        doc["sentences"].append(list(words))
        doc["ner"].append([[s + offset, e + offset, label] for s, e, label in entities])
        doc["relations"].append(
            [[a + offset, b + offset, c + offset, d + offset, label] for a, b, c, d, label in relations]
        )
        offset += len(words)
    return doc


def dygie_to_annotation(doc: dict) -> dict:
    """One DyGIE document (document-level inclusive indices) -> the radgraph annotation dict."""
    tokens = [t for sentence in doc["sentences"] for t in sentence]
    ids: dict[tuple[int, int], str] = {}
    entities: dict[str, dict] = {}
    for start, end, label in sorted(e for sentence in doc["ner"] for e in sentence):
        key = str(len(entities) + 1)
        ids[(start, end)] = key
        entities[key] = {
            "tokens": " ".join(tokens[start : end + 1]),
            "label": label,
            "start_ix": start,
            "end_ix": end,
            "relations": [],
        }
    for s1, e1, s2, e2, label in (r for sentence in doc["relations"] for r in sentence):
        source, target = ids.get((s1, e1)), ids.get((s2, e2))
        if source is None or target is None:
            raise ValueError(f"relation {label} in {doc.get('doc_key')!r} points at a span that is not an entity")
        entities[source]["relations"].append([label, target])
    return {"text": " ".join(tokens), "entities": entities, "data_source": None, "data_split": "inference"}
