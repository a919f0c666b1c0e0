"""The feature judge: a small neural network over `pair_features` (what two findings say about each attribute, and
their sentence-embedding cosine) that decides a finding pair in JUDGE_LABELS. The recipe `judge/pairs` trains it
(`architecture: pair_features`) on the data builders' logged edits; it runs in numpy (beside the sentence encoder its
cost does not show: docs/notes/finding-judge.md), and its export is a few kilobytes, small enough to ship with
radmetrics (inference/resources/finding_judge/).

The network: standardised features -> a hidden layer (tanh) -> a softmax over the labels the pair's features give
evidence for (`evidence_mask`): an attribute error needs a difference in that attribute's frame (a size, a tip
position, a hedge, a diagnosis, a place, a severity word, a change word), a contradiction a polarity or side that
differs; `same` and `unrelated` are always open. Without the mask, a network trained on logged edits reads a real
paraphrase whose words differ more than the builders' rewrites do as some attribute error; with it, two findings that
differ in no attribute are `same` or `unrelated`, whatever their wording. The export holds the feature names it was
trained on: an export whose names differ from this version's FEATURE_NAMES is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import atomic
from ..loading.checkpoint import CheckpointError
from .judge_labels import JUDGE_LABELS
from .pair_features import FEATURE_NAMES, pair_features

HEAD_FILE = "judge_head.json"
WEIGHTS_FILE = "model.safetensors"
ARCHITECTURE = "pair_features"


@dataclass
class FeatureHead:
    """The trained network: feature mean and scale, then hidden and output layers."""

    mean: np.ndarray
    scale: np.ndarray
    hidden_weight: np.ndarray  # (features, hidden)
    hidden_bias: np.ndarray
    output_weight: np.ndarray  # (hidden, labels)
    output_bias: np.ndarray
    encoder: str = "default"

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """Label probabilities, JUDGE_LABELS order; 0 for a label without evidence (`evidence_mask`)."""
        if len(rows) == 0:
            return np.zeros((0, len(JUDGE_LABELS)), dtype=np.float32)
        hidden = np.tanh(((rows - self.mean) / self.scale) @ self.hidden_weight + self.hidden_bias)
        logits = np.where(evidence_mask(rows), hidden @ self.output_weight + self.output_bias, -np.inf)
        logits = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)

    def save(self, directory: str | Path, extra: dict | None = None) -> None:
        from safetensors.numpy import save

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        tensors = {name: np.ascontiguousarray(getattr(self, name), dtype=np.float32) for name in _TENSORS}
        atomic.write_bytes(directory / WEIGHTS_FILE, save(tensors))
        config = {
            "architecture": ARCHITECTURE,
            "encoder": self.encoder,
            "features": list(FEATURE_NAMES),
            "labels": list(JUDGE_LABELS),
            "hidden_size": int(self.hidden_weight.shape[1]),
            **(extra or {}),
        }
        atomic.write_text(directory / HEAD_FILE, json.dumps(config, indent=2) + "\n")

    @classmethod
    def load(cls, directory: str | Path) -> FeatureHead:
        from safetensors.numpy import load_file

        directory = Path(directory)
        config = json.loads((directory / HEAD_FILE).read_text(encoding="utf-8"))
        if tuple(config.get("features", ())) != FEATURE_NAMES:
            raise CheckpointError(
                f"{directory}: the judge was trained on other pair features than this radmetrics computes; "
                "retrain it with `radmetrics train judge/pairs` (architecture: pair_features)"
            )
        if tuple(config.get("labels", ())) != JUDGE_LABELS:
            raise CheckpointError(
                f"{directory}: the judge's labels {config.get('labels')} are not {list(JUDGE_LABELS)}"
            )
        tensors = load_file(str(directory / WEIGHTS_FILE))
        return cls(**{name: tensors[name] for name in _TENSORS}, encoder=config.get("encoder", "default"))


# The features that give evidence for each attribute or contradiction: the label is open when any of them is non-zero.
EVIDENCE = {
    "measurement": ("size_any_dimension_change", "size_one_side", "percent_difference_tens", "percent_one_side"),
    "device_position": (
        "carina_distance",
        "malposition_added",
        "malposition_removed",
        "tip_places_differ",
        "tip_misplacement_differs",
    ),
    "certainty": ("hedge_level_gap",),  # "possibly" and "may represent" are one level: no certainty error
    # a diagnosis made vaguer or a description made a diagnosis, not one simply absent (pair_features._made_vague)
    "specificity": ("diagnosis_made_vague", "description_made_diagnosis", "vague_dropped", "vague_added"),
    "severity": ("severities_differ", "severity_words_differ", "severity_one_side"),
    "location": (
        "sides_differ",
        "side_one_side",
        "lobes_differ",
        "lobe_one_side",
        "zones_differ",
        "zone_one_side",
        "segments_differ",
        "segment_one_side",
    ),
    "interval_change": ("change_reversed", "change_one_side"),
    "negation": ("polarity_differs",),
    "laterality": ("sides_swapped", "side_words_swapped"),
}


def _evidence_columns() -> list[list[int] | None]:
    """Per label, the FEATURE_NAMES columns that open it (None: always open)."""
    index = {name: i for i, name in enumerate(FEATURE_NAMES)}
    columns = []
    for label in JUDGE_LABELS:
        parts = label.split(":")
        columns.append([index[f] for f in EVIDENCE[parts[1]]] if len(parts) > 1 else None)
    return columns


_EVIDENCE_COLUMNS = _evidence_columns()


def evidence_mask(rows: np.ndarray) -> np.ndarray:
    """(pairs, labels) booleans: which labels each pair's features give evidence for (EVIDENCE)."""
    mask = np.ones((len(rows), len(JUDGE_LABELS)), dtype=bool)
    for k, columns in enumerate(_EVIDENCE_COLUMNS):
        if columns is not None:
            mask[:, k] = (rows[:, columns] != 0).any(axis=1)
    return mask


_TENSORS = ("mean", "scale", "hidden_weight", "hidden_bias", "output_weight", "output_bias")


def is_feature_judge(directory: str | Path) -> bool:
    return (Path(directory) / HEAD_FILE).is_file()


def feature_rows(pairs: Sequence[tuple[str, str]], cosines: Sequence[float]) -> np.ndarray:
    """One row of FEATURE_NAMES per (reference, candidate) pair."""
    if not pairs:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    return np.array([pair_features(r, c, s) for (r, c), s in zip(pairs, cosines)], dtype=np.float32)


def cosines(pairs: Sequence[tuple[str, str]], encoder, batch_size: int = 64) -> np.ndarray:
    """Each pair's cosine between the two findings' sentence embeddings (`encoder.encode`, unit vectors)."""
    if not pairs:
        return np.zeros(0, dtype=np.float32)
    texts = sorted({t for pair in pairs for t in pair})
    vectors = dict(zip(texts, np.asarray(encoder.encode(texts, batch_size=batch_size), dtype=np.float32)))
    return np.array([_cosine(vectors[r], vectors[c]) for r, c in pairs], dtype=np.float32)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0
