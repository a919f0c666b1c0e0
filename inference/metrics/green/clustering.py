"""K-means and the silhouette score in numpy, for the clustered GREEN summary on a core install (no scikit-learn).

The reference summary clusters with scikit-learn's `KMeans(n_clusters=k, n_init=10, random_state=0)` and picks k by
`silhouette_score`. This is the same algorithm step for step, so that it finds the same clusters: greedy k-means++
seeding (2 + log(k) candidates per centre, drawn from one `np.random.RandomState(0)` in scikit-learn's order), Lloyd
iterations on mean-centred data (at most 300; stop when the labels repeat or the squared centre shift is within 1e-4 of
the mean feature variance), an empty cluster moved to the point farthest from its centre, and the run of lowest
inertia of 10 kept. Distances are computed in float64, so a near-tie may fall otherwise than in scikit-learn's float32.
"""

from __future__ import annotations

import numpy as np

N_INIT, MAX_ITER, TOLERANCE = 10, 300, 1e-4


def _squared_distances(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(n, k) squared Euclidean distances, clipped at 0."""
    value = (points**2).sum(axis=1)[:, None] - 2 * points @ centres.T + (centres**2).sum(axis=1)[None, :]
    return np.maximum(value, 0.0)


def _plus_plus(x: np.ndarray, k: int, random_state: np.random.RandomState) -> np.ndarray:
    """Greedy k-means++ seeding, as scikit-learn's `_kmeans_plusplus` with unit sample weights."""
    n = len(x)
    trials = 2 + int(np.log(k))
    centres = np.empty((k, x.shape[1]))
    centres[0] = x[random_state.choice(n, p=np.full(n, 1.0 / n))]
    closest = _squared_distances(x, centres[:1])[:, 0]
    potential = closest.sum()
    for c in range(1, k):
        draws = random_state.uniform(size=trials) * potential
        candidates = np.clip(np.searchsorted(np.cumsum(closest), draws), None, n - 1)
        distances = np.minimum(closest, _squared_distances(x, x[candidates]).T)
        potentials = distances.sum(axis=1)
        best = int(np.argmin(potentials))
        potential, closest = potentials[best], distances[best]
        centres[c] = x[candidates[best]]
    return centres


def _update(x: np.ndarray, centres: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """New centres: each cluster's mean; an empty cluster takes the point farthest from its own centre."""
    k = len(centres)
    sums, weights = np.zeros_like(centres), np.bincount(labels, minlength=k).astype(float)
    np.add.at(sums, labels, x)
    empty = np.flatnonzero(weights == 0)
    if len(empty):
        distances = ((x - centres[labels]) ** 2).sum(axis=1)
        far = np.argpartition(distances, -len(empty))[: -len(empty) - 1 : -1]
        for cluster, point in zip(empty, far):
            sums[labels[point]] -= x[point]
            sums[cluster] = x[point]
            weights[cluster] += 1.0
            weights[labels[point]] -= 1.0
    filled = weights > 0
    sums[filled] /= weights[filled, None]
    sums[~filled] = centres[~filled]
    return sums


def _lloyd(x: np.ndarray, centres: np.ndarray, tolerance: float) -> tuple[np.ndarray, float]:
    """Lloyd iterations from `centres`: (labels, inertia)."""
    labels_old = np.full(len(x), -1)
    strict = False
    for _ in range(MAX_ITER):
        labels = np.argmin(_squared_distances(x, centres), axis=1)
        new = _update(x, centres, labels)
        shift = ((new - centres) ** 2).sum()
        centres = new
        if np.array_equal(labels, labels_old):
            strict = True
            break
        if shift <= tolerance:
            break
        labels_old = labels
    if not strict:
        labels = np.argmin(_squared_distances(x, centres), axis=1)
    inertia = float(((x - centres[labels]) ** 2).sum())
    return labels, inertia


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings are the same up to renaming the clusters (scikit-learn's `_is_same_clustering`)."""
    mapping: dict[int, int] = {}
    return all(mapping.setdefault(int(p), int(q)) == int(q) for p, q in zip(a, b))


def kmeans_labels(points, k: int, seed: int = 0) -> np.ndarray:
    """Cluster labels of `points` (n, d) into `k` clusters: the lowest-inertia of N_INIT seeded runs."""
    x = np.asarray(points, dtype=float)
    x = x - x.mean(axis=0)
    tolerance = float(np.mean(np.var(x, axis=0))) * TOLERANCE
    random_state = np.random.RandomState(seed)
    best_labels, best_inertia = None, None
    for _ in range(N_INIT):
        labels, inertia = _lloyd(x, _plus_plus(x, k, random_state), tolerance)
        if best_inertia is None or (inertia < best_inertia and not _same_partition(labels, best_labels)):
            best_labels, best_inertia = labels, inertia
    return best_labels


def silhouette_score(points, labels) -> float:
    """Mean silhouette coefficient with Euclidean distances (a point alone in its cluster scores 0)."""
    x, labels = np.asarray(points, dtype=float), np.asarray(labels)
    clusters, inverse = np.unique(labels, return_inverse=True)
    if not 1 < len(clusters) < len(x):
        raise ValueError(f"the silhouette needs 2 to {len(x) - 1} clusters, got {len(clusters)}")
    distances = np.sqrt(_squared_distances(x, x))
    np.fill_diagonal(distances, 0.0)
    sizes = np.bincount(inverse).astype(float)
    totals = np.stack([distances[:, inverse == c].sum(axis=1) for c in range(len(clusters))], axis=1)
    own = inverse
    inside = totals[np.arange(len(x)), own] / np.maximum(sizes[own] - 1, 1)
    means = totals / sizes[None, :]
    means[np.arange(len(x)), own] = np.inf
    nearest = means.min(axis=1)
    scores = (nearest - inside) / np.maximum(inside, nearest)
    scores[sizes[own] == 1] = 0.0
    return float(np.mean(np.nan_to_num(scores)))
