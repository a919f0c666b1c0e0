"""Precision and recall beside every F1 that has them: RadGraph's matches at each reward level, CheXbert's labels
(micro, macro, per condition) and the semantic teacher's matched findings."""

import numpy as np
import pytest

from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
from radmetrics.inference.metrics.chexbert.f1 import chexbert_f1, chexbert_precision_recall, per_condition


def test_chexbert_precision_recall_equal_sklearn():
    """f1chexbert reports sklearn's classification_report: the same precision and recall, zero_division=0."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    ref, hyp = rng.integers(0, 4, (60, 14)), rng.integers(0, 4, (60, 14))
    ref[:, 3] = 0  # a condition never true: recall 0 by zero_division
    hyp[:, 5] = 2  # a condition never predicted: precision 0
    ours = chexbert_precision_recall(ref, hyp)
    truth, predicted = np.isin(ref, (1, 3)).astype(int), np.isin(hyp, (1, 3)).astype(int)
    five = [
        CHEXPERT_CONDITIONS.index(c)
        for c in ("Cardiomegaly", "Edema", "Consolidation", "Atelectasis", "Pleural Effusion")
    ]
    for n, columns in ((14, slice(None)), (5, five)):
        for kind in ("micro", "macro"):
            p, r, f, _ = sklearn_metrics.precision_recall_fscore_support(
                truth[:, columns], predicted[:, columns], average=kind, zero_division=0
            )
            assert ours[f"chexbert_precision_{n}_{kind}"] == pytest.approx(p)
            assert ours[f"chexbert_recall_{n}_{kind}"] == pytest.approx(r)
            assert chexbert_f1(ref, hyp)[f"chexbert_f1_{n}_{kind}"] == pytest.approx(f)
    table = per_condition(ref, hyp)
    p, r, f, support = sklearn_metrics.precision_recall_fscore_support(truth, predicted, zero_division=0)
    for i, name in enumerate(CHEXPERT_CONDITIONS):
        assert (
            table[name]["precision"],
            table[name]["recall"],
            table[name]["f1"],
            table[name]["support"],
        ) == pytest.approx((p[i], r[i], f[i], support[i]))


def graph(*entities):
    return {
        "entities": {
            str(i): {"tokens": t, "label": label, "relations": rel} for i, (t, label, rel) in enumerate(entities, 1)
        }
    }


def test_radgraph_precision_and_recall_per_level(monkeypatch):
    from radmetrics.inference.metrics.radgraph import metric as radgraph_metric

    reference = graph(
        ("effusion", "OBS-DP", [["located_at", "2"]]), ("pleural", "ANAT-DP", []), ("left", "ANAT-DP", [])
    )
    candidate = graph(
        ("effusion", "OBS-DP", []), ("pleural", "ANAT-DP", []), ("small", "OBS-DP", []), ("right", "ANAT-DP", [])
    )

    class Extractor:
        def annotations(self, reports):
            return [reference if text == "ref" else candidate for text in reports]

    monkeypatch.setattr(radgraph_metric, "radgraph_extractor", lambda path, base_model=None: Extractor())
    out = radgraph_metric.RadGraph({"radgraph": "stub"})(["ref"], ["cand"]).per_sample
    # simple: {effusion, pleural} shared; 4 candidate entities, 3 reference ones
    assert out["radgraph_simple_precision"] == [pytest.approx(2 / 4)] and out["radgraph_simple_recall"] == [
        pytest.approx(2 / 3)
    ]
    assert out["radgraph_simple"] == [pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3))]
    # partial: the reference's effusion has a relation, the candidate's not: only pleural matches
    assert out["radgraph_partial_precision"] == [pytest.approx(1 / 4)] and out["radgraph_partial_recall"] == [
        pytest.approx(1 / 3)
    ]


def test_semantic_teacher_precision_and_recall():
    from radmetrics.inference.scoring.scorer import Scorer

    references = ["Heart size is normal. Lungs are clear. Small left pleural effusion. Mild cardiomegaly."]
    candidates = ["Heart size is normal. Lungs are clear. Mild cardiomegaly."]
    every = Scorer(["semantic_green"], {}, {"semantic_green": {"findings": "statements"}}, n_bootstrap=0)
    row = every(references, candidates).per_sample[0]  # every statement: 3 of 4 matched
    assert row["semantic_green_matched_findings"] == 3
    assert row["semantic_green_precision"] == pytest.approx(3 / 3) and row["semantic_green_recall"] == pytest.approx(
        3 / 4
    )
    row = Scorer(["semantic_green"], n_bootstrap=0)(references, candidates).per_sample[0]  # the findings: 1 of 2
    assert row["semantic_green_matched_findings"] == 1
    assert row["semantic_green_precision"] == 1.0 and row["semantic_green_recall"] == pytest.approx(1 / 2)


def test_a_pair_without_findings_scores_1_with_precision_and_recall_0_and_report_html_says_so():
    from radmetrics.inference.metrics.semantic_green.metric import NO_FINDINGS_NOTE, SemanticGreen
    from radmetrics.inference.scoring.scorer import Scorer

    normal = "Heart size is normal. Lungs are clear."
    result = Scorer(["semantic_green"], n_bootstrap=0)([normal], [normal])
    row = result.per_sample[0]
    assert row["semantic_green"] == 1.0
    assert row["semantic_green_precision"] == 0.0 and row["semantic_green_recall"] == 0.0
    shown = SemanticGreen.display_detail(result.details["semantic_green"][0])
    assert NO_FINDINGS_NOTE in shown["notes"]
    with_findings = Scorer(["semantic_green"], n_bootstrap=0)(["Small left pleural effusion."], [normal])
    assert NO_FINDINGS_NOTE not in SemanticGreen.display_detail(with_findings.details["semantic_green"][0])["notes"]
