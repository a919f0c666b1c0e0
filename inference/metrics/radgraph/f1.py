"""RadGraph F1 on two radgraph-package annotation dicts (see annotation.py).

Reward levels reproduce radgraph==0.1.18 `F1RadGraph` (rewards.py; Delbrouck et al. 2022):
- simple:   set of (tokens, label) per entity;
- partial:  (tokens, label) for an entity without relations, (tokens, label, True) with relations;
- complete: (tokens, label) without relations, one (tokens, label, relation, target tokens) per relation,
  the tokens lower-cased (the reference lower-cases at this level only);
precision over the hypothesis set, recall over the reference set, 0 for all three when either report
has no entities, as the reference does. The reference lower-cases tokens only inside the complete level's
relation tuples, so "Effusion" and "effusion" match there and nowhere else: `case="reference"` reproduces that
mix; `case="insensitive"` (default) lower-cases tokens at every level, as the complete level intends;
`case="sensitive"` at none.

`radgraph_radcliq` is the RadGraph feature of RadCliQ (rajpurkarlab/CXR-Report-Metric; Yu et al. 2023,
section "RadGraph F1"): (entity F1 + relation F1) / 2 with entities as (tokens, label) and relations as
(source entity, target entity, relation).
"""

from __future__ import annotations

from ...scoring.stats import precision_recall_f1

LEVELS = ("simple", "partial", "complete")
CASES = ("reference", "sensitive", "insensitive")


def _tokens(entity: dict, level: str, case: str) -> str:
    lower = case == "insensitive" or (case == "reference" and level == "complete")
    return entity["tokens"].lower() if lower else entity["tokens"]


def _items(annotation: dict, level: str, case: str) -> set:
    entities = annotation.get("entities", {})
    items = set()
    for entity in entities.values():
        relations = entity.get("relations") or []
        if level == "simple" or not relations:
            tokens = entity["tokens"].lower() if case == "insensitive" else entity["tokens"]
            items.add((tokens, entity["label"]))
        elif level == "partial":
            items.add((_tokens(entity, level, case), entity["label"], True))
        else:
            for relation, target in relations:
                items.add(
                    (_tokens(entity, level, case), entity["label"], relation, _tokens(entities[target], level, case))
                )
    return items


def _prf(hyp: set, ref: set) -> tuple[float, float, float]:
    precision, recall, f1 = precision_recall_f1(len(hyp & ref), len(hyp), len(ref))
    return f1, precision, recall


def radgraph_scores(
    hyp_annotation: dict, ref_annotation: dict, level: str = "partial", case: str = "insensitive"
) -> tuple[float, float, float]:
    """(F1, precision, recall) at one reward level."""
    if level not in LEVELS:
        raise ValueError(
            f"unknown RadGraph reward level {level!r}; expected one of {LEVELS} (or 'all' in radgraph_f1)"
        )
    if case not in CASES:
        raise ValueError(f"unknown case option {case!r}; expected one of {CASES}")
    if not hyp_annotation.get("entities") or not ref_annotation.get("entities"):
        return 0.0, 0.0, 0.0
    return _prf(_items(hyp_annotation, level, case), _items(ref_annotation, level, case))


def radgraph_f1(hyp_annotation: dict, ref_annotation: dict, level: str = "partial", case: str = "insensitive"):
    """F1 at `level` ("simple", "partial", "complete"), or the (simple, partial, complete) triple for "all"."""
    if level == "all":
        return tuple(radgraph_scores(hyp_annotation, ref_annotation, lvl, case)[0] for lvl in LEVELS)
    return radgraph_scores(hyp_annotation, ref_annotation, level, case)[0]


def radgraph_radcliq(hyp_annotation: dict, ref_annotation: dict) -> float:
    def entity_set(annotation):
        return {(e["tokens"], e["label"]) for e in annotation.get("entities", {}).values()}

    def relation_set(annotation):
        entities = annotation.get("entities", {})
        return {
            ((e["tokens"], e["label"]), (entities[t]["tokens"], entities[t]["label"]), relation)
            for e in entities.values()
            for relation, t in e.get("relations") or []
            if t in entities
        }

    entity_f1 = _prf(entity_set(hyp_annotation), entity_set(ref_annotation))[0]
    relation_f1 = _prf(relation_set(hyp_annotation), relation_set(ref_annotation))[0]
    return (entity_f1 + relation_f1) / 2
