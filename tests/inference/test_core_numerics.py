"""Core replacements of extra-only packages: RadCliQ's constrained fit in scipy (was cvxpy), GREEN's summary
clustering in numpy (was scikit-learn's KMeans and silhouette_score) and the linear-weighted kappa in numpy (was
scikit-learn's cohen_kappa_score). Each is compared with what it replaces; the comparisons with scikit-learn skip
where the `train` extra is not installed."""

import json

import numpy as np
import pytest

from radmetrics.inference.meta_evaluation.significance_agreement import weighted_kappa
from radmetrics.inference.metrics.green.clustering import kmeans_labels, silhouette_score
from radmetrics.inference.metrics.green.summary import _best_k_labels
from radmetrics.inference.metrics.radcliq.composite import fit_radcliq, simplex_least_squares

pytestmark = pytest.mark.core


def test_fit_radcliq_gives_the_cvxpy_coefficients(test_data):
    recorded = json.loads((test_data / "radcliq" / "fit_radcliq_cvxpy.json").read_text())
    assert len(recorded["cases"]) == 7
    for case in recorded["cases"]:
        fit = fit_radcliq(np.array(case["features"]), np.array(case["errors"]))
        assert np.allclose(fit["coefs_with_bias_last"], case["coefs_with_bias_last"], rtol=0, atol=1e-6), case["name"]


def test_simplex_least_squares_is_the_constrained_minimum():
    rng = np.random.default_rng(7)
    a, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    v = simplex_least_squares(a, y)
    assert np.all(v >= 0) and np.isclose(v.sum(), 1.0, rtol=0, atol=1e-12)
    loss = np.sum((a @ v - y) ** 2)
    for _ in range(2000):  # no point of the simplex does better
        other = rng.dirichlet(np.ones(4) * 0.5)
        assert np.sum((a @ other - y) ** 2) >= loss - 1e-9
    # a target inside the simplex is found exactly; one vertex when the target is that column
    assert np.allclose(simplex_least_squares(np.eye(4), np.array([0.1, 0.2, 0.3, 0.4])), [0.1, 0.2, 0.3, 0.4])
    assert np.allclose(simplex_least_squares(a, a[:, 2]), [0, 0, 1, 0], atol=1e-9)


def _blobs(seed, n_per=6, d=5, k=3, spread=0.05):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(k, d))
    truth = np.repeat(np.arange(k), n_per)
    return centres[truth] + rng.normal(scale=spread, size=(len(truth), d)), truth


def _same_partition(a, b):
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_kmeans_finds_separated_clusters_and_the_silhouette_picks_their_number():
    x, truth = _blobs(0)
    assert _same_partition(kmeans_labels(x, 3), truth)
    assert _same_partition(_best_k_labels(x), truth)
    assert list(_best_k_labels(x[:2])) == [0, 0]


def test_silhouette_of_a_small_example_by_hand():
    x = np.array([[0.0], [1.0], [4.0], [6.0]])
    labels = np.array([0, 0, 1, 1])
    # a(i): mean distance within the cluster; b(i): to the other cluster; s = (b - a) / max(a, b)
    by_hand = np.mean([(5 - 1) / 5, (4 - 1) / 4, (3.5 - 2) / 3.5, (5.5 - 2) / 5.5])
    assert silhouette_score(x, labels) == pytest.approx(by_hand, abs=1e-12)
    assert silhouette_score(np.array([[0.0], [1.0], [5.0]]), np.array([0, 0, 1])) == pytest.approx(
        np.mean([(5 - 1) / 5, (4 - 1) / 4, 0.0]), abs=1e-12
    )  # a point alone in its cluster scores 0


def test_kmeans_and_silhouette_agree_with_scikit_learn():
    cluster = pytest.importorskip("sklearn.cluster", reason="the comparison needs scikit-learn (the train extra)")
    metrics = pytest.importorskip("sklearn.metrics")
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(6, 30)), int(rng.integers(2, 12))
        centres = rng.normal(scale=4, size=(4, d))
        x = centres[rng.integers(0, 4, n)] + rng.normal(size=(n, d))
        if seed % 3 == 0:
            x = x[rng.integers(0, max(2, n // 3), n)]  # repeated sentences: identical embeddings
        for k in range(2, min(6, n - 1) + 1):
            theirs = cluster.KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(x)
            ours = kmeans_labels(x, k)
            assert _same_partition(ours, theirs), (seed, k)
            if 1 < len(set(theirs.tolist())) < n:
                assert silhouette_score(x, theirs) == pytest.approx(metrics.silhouette_score(x, theirs), abs=1e-6)


LEVELS = ("benign_expected", "not_actionable_not_urgent", "actionable_not_urgent", "urgent")


def test_weighted_kappa_by_hand():
    a = [LEVELS[0], LEVELS[1], LEVELS[3], LEVELS[3]]
    b = [LEVELS[0], LEVELS[2], LEVELS[3], LEVELS[2]]
    # observed disagreement 0 + 1 + 0 + 1 = 2; by chance: sum of |i - j| * row_i * col_j / n = (7 + 5 + 10) / 4
    assert weighted_kappa(a, b) == pytest.approx(1 - 2 / (22 / 4), abs=1e-12)
    assert weighted_kappa(a, a) == 1.0
    assert np.isnan(weighted_kappa([LEVELS[0]] * 3, [LEVELS[0]] * 3))


def test_weighted_kappa_agrees_with_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics", reason="the comparison needs scikit-learn (the train extra)")
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = [LEVELS[i] for i in rng.integers(0, 4, 25)]
        b = [LEVELS[i] for i in rng.integers(0, 4, 25)]
        theirs = metrics.cohen_kappa_score(a, b, labels=list(LEVELS), weights="linear")
        assert weighted_kappa(a, b) == pytest.approx(theirs, abs=1e-12)


def test_green_summary_clusters_the_errors_with_the_bundled_encoder():
    """The clustered GREEN summary on a core install: two kinds of significant error, each said three ways, become two
    clusters of three, each named by one of its own sentences."""
    from radmetrics.inference.metrics.green.format import parse_green_response, render_green_response
    from radmetrics.inference.metrics.green.summary import green_summary

    effusion = ["A pleural effusion is reported", "The candidate adds a pleural effusion", "Pleural effusion added"]
    tube = ["The endotracheal tube is omitted", "The ET tube is not mentioned", "Missing the endotracheal tube"]
    responses = [render_green_response("x", {"a": [e, t]}, {}, ["Heart size normal"]) for e, t in zip(effusion, tube)]
    responses.append(render_green_response("x", {}, {}, ["Heart size normal"]))
    summary = green_summary(responses, [parse_green_response(r) for r in responses])
    assert summary["a"]["errors"] == 6 and summary["a"]["accuracy"] == 0.25 and summary["b"]["clusters"] == []
    clusters = summary["a"]["clusters"]
    assert [c["size"] for c in clusters] == [3, 3]
    assert sorted(c["representative"] in effusion for c in clusters) == [False, True]
    assert all(c["representative"] in effusion + tube for c in clusters)
