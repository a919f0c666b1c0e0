"""The statistics module's vectorised path for mean-aggregated keys against its loop: the same draws and the same
float operations, so exactly the same intervals and p-values (compared with ==, not approx)."""

import numpy as np
import pytest

from radmetrics.inference.meta_evaluation.radpref import candidate_preference
from radmetrics.inference.scoring.scorer import Scorer
from radmetrics.inference.scoring.stats import (
    _paired_means_vectorised,
    bootstrap_ci,
    bootstrap_mean_ci,
    paired_comparison,
    paired_key_comparison,
    paired_means,
    scored_mean,
)

pytestmark = pytest.mark.core

REFS = ["No acute cardiopulmonary process.", "Mild cardiomegaly.", "Small left pleural effusion.", "Lungs are clear."]
SYSTEM_A = ["No acute cardiopulmonary process.", "The heart is mildly enlarged.", "No pleural effusion.", "Clear."]
SYSTEM_B = ["Normal chest.", "Mild cardiomegaly is seen.", "Small left pleural effusion.", "Lungs are clear."]


def loop_paired_means(a, b, n_bootstrap, n_permutations, seed):
    both = np.concatenate([a, b])
    return paired_comparison(lambda idx: float(both[idx].mean()), len(a), n_bootstrap, n_permutations, seed)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 500])
def test_vectorised_paired_means_equal_the_loop(n):
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = np.round(a - 0.02 + rng.normal(0, 0.05, n), 3)  # ties and near-ties: permutations at the threshold
    assert _paired_means_vectorised(a, b, 200, 700, 7) == loop_paired_means(a, b, 200, 700, 7)
    assert paired_means(a, b, 200, 700, 7) == loop_paired_means(a, b, 200, 700, 7)


def test_vectorised_path_equal_the_loop_past_numpy_summation_block():
    """Rows longer than numpy's 8,192-element reduction block (compare's 10,000 pairs) sum as the loop's do."""
    rng = np.random.default_rng(0)
    a, b = rng.random(10_000) * 1e3, rng.random(10_000) * 1e-3
    assert _paired_means_vectorised(a, b, 4, 6, 1) == loop_paired_means(a, b, 4, 6, 1)
    assert bootstrap_mean_ci(a, 4, 2) == bootstrap_ci(lambda idx: scored_mean(a[idx]), len(a), 4, 2)


def test_blocks_of_resamples_do_not_change_the_draws(monkeypatch):
    from radmetrics.inference.scoring import stats

    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40)
    whole = _paired_means_vectorised(a, b, 50, 90, 3)
    monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", 7 * 40)  # 7 resamples per block
    assert _paired_means_vectorised(a, b, 50, 90, 3) == whole == loop_paired_means(a, b, 50, 90, 3)


def test_bootstrap_mean_ci_equals_the_loop_with_and_without_unscored_pairs():
    rng = np.random.default_rng(2)
    values = rng.random(300)
    assert bootstrap_mean_ci(values, 400, 9) == bootstrap_ci(lambda idx: scored_mean(values[idx]), 300, 400, 9)
    values[::7] = np.nan  # unscored pairs: the loop, each resample's mean over its scored values
    interval = bootstrap_mean_ci(values, 400, 9)
    assert interval == bootstrap_ci(lambda idx: scored_mean(values[idx]), 300, 400, 9)
    assert not np.isnan(interval).any()


@pytest.mark.parametrize("key", ["bleu2", "rougeL", "bleu4"])
def test_compare_and_score_statistics_equal_the_aggregate_loop(key):
    """`radmetrics compare`'s statistics and the Scorer's intervals: mean keys (rougeL, bleu2) through the vectorised
    path, corpus BLEU-4 through the loop, each equal to the loop over `result.aggregate` that every key took before."""
    result = Scorer(["bleu2", "rougeL", "bleu4"], n_bootstrap=300)(REFS + REFS, SYSTEM_A + SYSTEM_B)
    n, kept = len(REFS), np.arange(len(REFS))
    assert (result.mean_values(key) is None) == (key == "bleu4")
    index = np.concatenate([kept, kept + n])
    loop = paired_comparison(lambda idx: result.aggregate(key, index[idx]), n, 300, 1000, 4)
    assert paired_key_comparison(result, key, kept, n, 300, 1000, 4) == loop
    interval = bootstrap_ci(lambda idx: result.aggregate(key, idx), 2 * n, 300, 0)
    assert result.summary[key]["ci95"] == list(interval)


def test_radpref_preference_counts_as_it_did():
    """RadPref's preference accuracy (ties half, a case the metric could not score left out) through the shared
    preference_accuracy, against the formula it replaced."""
    values = np.array([0.9, 0.1, 0.2, 0.2, np.nan, 0.5, 0.3, 0.8, 0.6, 0.4, 0.7, 0.1])
    preferred = np.array([1, 2, 1, 2, 2, 0])
    first, second = values[0::2], values[1::2]
    kept = (preferred != 0) & ~(np.isnan(first) | np.isnan(second))
    credit = np.where(first == second, 0.5, ((first > second) == (preferred == 1)).astype(float))[kept]
    expected = {
        "accuracy": float(credit.mean()),
        "n": int(kept.sum()),
        "metric_ties": int((first == second)[kept].sum()),
    }
    assert candidate_preference(values, preferred) == expected == {"accuracy": 0.625, "n": 4, "metric_ties": 1}
