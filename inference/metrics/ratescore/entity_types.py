"""Entity types a radmetrics RaTE-NER export tags beyond RaTEScore's affinity matrix (a user's own label set,
`radmetrics data import --labels-from-data`): the matrix W has a weight for each pair of its five types only.

Such a type is scored with option `other_type_weight`: every pair that involves a type the matrix lacks (its
entities matched to any type, and any entity matched to it) weighs that much, and no such pair is a negation clash.
Without the option RaTEScore refuses the export in one line before any model loads (`check_export_types`)."""

from __future__ import annotations

import json
from pathlib import Path

from ...loading.checkpoint import MANIFEST_NAME
from ..base import OptionError
from .score import Weights, load_affinity


def matrix_types(weights: Weights) -> set[str]:
    return {t for pair in weights for t in pair}


def export_entity_types(path: str) -> list[str]:
    """The entity types in a local export's manifest ([] for a Hub id or a folder without one: checked at scoring)."""
    manifest = Path(path) / MANIFEST_NAME
    if not manifest.is_file():
        return []
    labels = json.loads(manifest.read_text(encoding="utf-8")).get("label_map", {}).get("labels", [])
    return list(dict.fromkeys(label[2:] if label[:2] in ("B-", "I-") else label for label in labels[1:]))


def refuse_other_types(missing: set[str], matrix: str, source: str) -> None:
    if missing:
        raise OptionError(
            f"metric ratescore: {source} tags entity type(s) {sorted(missing)} that the {matrix} affinity matrix "
            "lacks: pass --option ratescore.other_type_weight=W (the weight, 0 to 1, of every pair with such a type; "
            "docs/bring-your-own-labels.md) or a matrix JSON that has them"
        )


def check_export_types(options: dict, components: dict) -> None:
    """OptionError when an export names a type the matrix lacks and `other_type_weight` is unset."""
    if options.get("other_type_weight") is not None:
        return
    known = matrix_types(load_affinity(options["matrix"])[0])
    for kind in ("rate_ner_iob", "rate_ner_span"):
        if kind in components:
            missing = {t.upper() for t in export_entity_types(str(components[kind]))} - known
            refuse_other_types(missing, options["matrix"], f"the {kind} export {components[kind]}")


def with_other_types(weights: Weights, types: set[str], weight: float | None, matrix: str) -> Weights:
    """`weights` extended to `types` (upper-case) the matrix lacks, each such pair weighing `weight`."""
    known = matrix_types(weights)
    missing = {t.upper() for t in types} - known
    if not missing:
        return weights
    if weight is None:
        refuse_other_types(missing, matrix, "the tagger")
    every = known | missing
    return {**weights, **{(a, b): weight for a in every for b in every if a in missing or b in missing}}
