"""The clustered GREEN summary (Ostmeier et al. 2024, section 3.3)."""

from __future__ import annotations

import numpy as np

from ...models.text_encoder import TextEncoder
from .clustering import kmeans_labels, silhouette_score
from .format import CATEGORY_LETTERS, GreenParse


def error_lines(response: str, section_title: str = "Clinically Significant Errors") -> dict[str, list[str]]:
    """The error descriptions listed per category in one section: "(a) ...: 2. first; second." -> {"a": [...]}."""
    import re

    found = {c: [] for c in CATEGORY_LETTERS}
    match = re.search(rf"\[{re.escape(section_title)}\]:\s*(.*?)(?:\n\s*\n|\Z)", response or "", re.DOTALL)
    if not match:
        return found
    for letter, rest in re.findall(r"^\(([a-f])\) [^:]*: \d+\.?(.*)$", match.group(1), re.MULTILINE):
        found[letter] = [e.strip(" .") for e in rest.split(";") if e.strip(" .")]
    return found


def _best_k_labels(embeddings: np.ndarray, max_k: int = 8):
    """K-means labels (the reference's scikit-learn KMeans, n_init=10, random_state=0, in numpy: clustering.py) with
    k chosen by the silhouette score (one cluster when there are too few points)."""
    n = len(embeddings)
    if n < 3:
        return np.zeros(n, dtype=int)
    best, best_score = np.zeros(n, dtype=int), -1.0
    for k in range(2, min(max_k, n - 1) + 1):
        labels = kmeans_labels(embeddings, k, seed=0)
        if len(set(labels)) < 2:
            continue
        score = silhouette_score(embeddings, labels)
        if score > best_score:
            best, best_score = labels, score
    return best


def green_summary(responses: list[str], parses: list[GreenParse], encoder="default", max_k: int = 8) -> dict:
    """The clustered GREEN summary (section 3.3): per category, the share of reports without such a significant
    error ("accuracy"), and the significant error sentences clustered (sentence-transformer embeddings, k by
    silhouette), each cluster named by the sentence nearest its centre, largest cluster first."""
    scored = [(r, p) for r, p in zip(responses, parses) if p.parsed]
    summary = {}
    for position, letter in enumerate(CATEGORY_LETTERS):
        errors = [e for r, _ in scored for e in error_lines(r)[letter]]
        entry = {
            "accuracy": float(np.mean([p.significant[position] == 0 for _, p in scored])) if scored else None,
            "errors": len(errors),
            "clusters": [],
        }
        if errors:
            embeddings = np.asarray(TextEncoder(encoder).encode(errors))
            labels = _best_k_labels(embeddings, max_k)
            for label in sorted(set(labels), key=lambda c: -int(np.sum(labels == c))):
                members = np.flatnonzero(labels == label)
                centre = embeddings[members].mean(axis=0)
                nearest = members[int(np.argmin(np.linalg.norm(embeddings[members] - centre, axis=1)))]
                entry["clusters"].append({"representative": errors[nearest], "size": int(len(members))})
        summary[letter] = entry
    return summary
