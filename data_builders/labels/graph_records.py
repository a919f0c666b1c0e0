"""Entity-and-relation documents, the form the RadGraph JSON and BRAT readers return and radgraph/train reads: DyGIE
`{"doc_key", "sentences", "ner", "relations", "split"?}` with document-level inclusive word indices. A report is one
sentence, as the radgraph package feeds its DyGIE model a whole report."""

from __future__ import annotations

from .problems import Problems


def graph_document(
    doc_key: str,
    tokens: list[str],
    entities: dict[str, tuple[int, int, str]],
    relations: list[tuple[str, str, str, int]],
    where: tuple[str, int],
    problems: Problems,
) -> dict | None:
    """A DyGIE document from entities {id: (start, end, label)} and relations (source id, target id, label, line);
    a relation naming no entity of the document is a problem (the document is left out)."""
    if not tokens:
        problems.add(*where, f"document {doc_key!r} has no tokens", "empty_document")
        return None
    links, bad = [], False
    for source, target, label, line in relations:
        if source not in entities or target not in entities:
            missing = source if source not in entities else target
            problems.add(
                where[0], line, f"relation {label!r} names {missing!r}, not an entity of {doc_key!r}", ("bad_relation")
            )
            bad = True
            continue
        links.append([*entities[source][:2], *entities[target][:2], label])
    if bad:
        return None
    ner = sorted({tuple(e) for e in entities.values()})
    return {
        "doc_key": doc_key,
        "sentences": [list(tokens)],
        "ner": [[list(e) for e in ner]],
        "relations": [sorted(links)],
        "_source": where,
    }
