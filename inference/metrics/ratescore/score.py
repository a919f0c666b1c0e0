"""RaTEScore from entity embeddings and types (Zhao et al. 2024, section 2; MAGIC-AI4Med/RaTEScore utils.compute).

For each entity on one side, the most cosine-similar entity on the other side is its match; the match
contributes sim * W[type, matched type] * (neg_weight if the pair is a negation clash, e.g. DISEASE vs
NON-DISEASE, else 1), normalised by the sum of W. This is computed reference->candidate and
candidate->reference and the score is their harmonic mean; a pair where either side has no entities
scores 0.5, as the reference does.

W and neg_weight come from the bundled affinity files ("long" or "short"). Note: the reference code's
`compute` hard-codes neg_weight = 0.3612 instead of reading the file's value; `neg_weight=0.3612`
reproduces that behaviour, the default uses the file's value (0.8717 long) as the paper describes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np

from ...loading.components import RATE_ENTITY_TYPES
from ...models.text_encoder import TextEncoder

NEGATION_CLASHES = {
    ("NON-DISEASE", "DISEASE"),
    ("NON-ABNORMALITY", "ABNORMALITY"),
    ("DISEASE", "NON-DISEASE"),
    ("ABNORMALITY", "NON-ABNORMALITY"),
    ("NON-DISEASE", "ABNORMALITY"),
    ("NON-ABNORMALITY", "DISEASE"),
    ("DISEASE", "NON-ABNORMALITY"),
    ("ABNORMALITY", "NON-DISEASE"),
}
ENTITY_TYPES = RATE_ENTITY_TYPES
EMPTY_SCORE = 0.5


Weights = dict[tuple[str, str], float]


@lru_cache(maxsize=8)
def _load_affinity_file(matrix: str) -> tuple[tuple[tuple[tuple[str, str], float], ...], float]:
    path = (
        Path(str(files("radmetrics.inference").joinpath("resources", f"affinity_{matrix}_weight.json")))
        if matrix in ("long", "short")
        else Path(matrix)
    )
    if not path.is_file():
        raise FileNotFoundError(
            f"RaTEScore affinity matrix {matrix!r} not found (expected 'long', 'short' or a JSON file)"
        )
    raw = json.loads(path.read_text(encoding="utf-8"))
    neg_weight = float(raw.pop("neg_weight"))
    return tuple((tuple(key.upper().split("_")), float(value)) for key, value in raw.items()), neg_weight


def load_affinity(matrix: str = "long") -> tuple[Weights, float]:
    """("long" | "short" | a JSON path in the same layout) -> ({(type, type): weight}, neg_weight)."""
    pairs, neg_weight = _load_affinity_file(str(matrix))
    return dict(pairs), neg_weight


def affinity_to_json(weights: Weights, neg_weight: float) -> dict:
    """The bundled files' layout: {"abnormality_anatomy": w, ..., "neg_weight": p}."""
    return {**{f"{a.lower()}_{b.lower()}": w for (a, b), w in sorted(weights.items())}, "neg_weight": neg_weight}


def best_matches(
    source: np.ndarray, source_types, target: np.ndarray, target_types
) -> list[tuple[float, tuple[str, str]]]:
    """For each source entity, (cosine of its best target match, (source type, matched type)).
    Independent of W, so a weight search computes it once per pair."""
    source = source / np.linalg.norm(source, axis=1, keepdims=True).clip(1e-12)
    target = target / np.linalg.norm(target, axis=1, keepdims=True).clip(1e-12)
    similarity = source @ target.T
    best = similarity.argmax(axis=1)
    return [(float(similarity[i, j]), (source_types[i], target_types[j])) for i, j in enumerate(best)]


def directional_score(matches: list[tuple[float, tuple[str, str]]], weights: Weights, neg_weight: float) -> float:
    numerator = denominator = 0.0
    for similarity, pair in matches:
        w = weights[pair]
        numerator += similarity * w * (neg_weight if pair in NEGATION_CLASHES else 1.0)
        denominator += w
    return numerator / denominator if denominator else 0.0


def score_from_matches(forward, backward, weights: Weights, neg_weight: float) -> float:
    """Harmonic mean of the two directions; `None` matches (a side without entities) score 0.5."""
    if forward is None or backward is None:
        return EMPTY_SCORE
    f = directional_score(forward, weights, neg_weight)
    b = directional_score(backward, weights, neg_weight)
    return 2 * f * b / (f + b) if f + b else 0.0


def pair_matches(ref_embeddings, ref_types, cand_embeddings, cand_types, entity_types=ENTITY_TYPES):
    """(reference->candidate, candidate->reference) matches of one pair, or (None, None) if a side is empty;
    `entity_types`: the types allowed (RaTE's five, and an export's own: entity_types.py)."""
    ref, cand = np.asarray(ref_embeddings, dtype=float), np.asarray(cand_embeddings, dtype=float)
    if len(ref) != len(ref_types) or len(cand) != len(cand_types):
        raise ValueError("each entity embedding needs exactly one type")
    if len(ref) == 0 or len(cand) == 0:
        return None, None
    ref_types, cand_types = [t.upper() for t in ref_types], [t.upper() for t in cand_types]
    unknown = {t for t in ref_types + cand_types if t not in entity_types}
    if unknown:
        raise ValueError(f"unknown RaTE-NER entity type(s) {sorted(unknown)}; expected {tuple(entity_types)}")
    return best_matches(ref, ref_types, cand, cand_types), best_matches(cand, cand_types, ref, ref_types)


def ratescore_from_entities(
    ref_embeddings, ref_types, cand_embeddings, cand_types, matrix: str = "long", neg_weight: float | None = None
) -> float:
    """RaTEScore of one pair from entity embeddings (n x d arrays) and their RaTE-NER types."""
    weights, file_neg_weight = load_affinity(matrix)
    forward, backward = pair_matches(ref_embeddings, ref_types, cand_embeddings, cand_types)
    return score_from_matches(forward, backward, weights, file_neg_weight if neg_weight is None else neg_weight)


@lru_cache(maxsize=2)
def _text_encoder(encoder: str, pooling: str):
    """Loaded once per (encoder, pooling): entity lists are embedded on every call of a reward."""
    return TextEncoder(encoder, pooling=pooling, max_length=32)


def embed_entity_lists(
    entity_lists: Sequence[Sequence[Sequence[str]]], encoder: str = "default", pooling: str = "mean"
):
    """[[ [text, type], ... ], ...] -> [(embeddings, types), ...], each distinct text embedded once."""
    texts = sorted({text for entities in entity_lists for text, _ in entities})
    vectors = _text_encoder(encoder, pooling).encode(texts, progress=len(texts) > 2000)
    index = {text: i for i, text in enumerate(texts)}
    dim = vectors.shape[1]
    return [
        (vectors[[index[t] for t, _ in entities]] if entities else np.zeros((0, dim)), [kind for _, kind in entities])
        for entities in entity_lists
    ]
