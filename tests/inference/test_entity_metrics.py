import json
import math

import numpy as np
import pytest

from radmetrics.data_builders.corpus.corpora import bundled_path
from radmetrics.inference import chexbert_f1, radgraph_f1, ratescore_from_entities
from radmetrics.inference.metrics.radgraph.f1 import radgraph_radcliq, radgraph_scores

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


def _annotation(entities):
    return {
        "text": "",
        "entities": {
            str(i + 1): {"tokens": t, "label": label, "start_ix": i, "end_ix": i, "relations": [list(r) for r in rels]}
            for i, (t, label, rels) in enumerate(entities)
        },
    }


REF = _annotation([("lungs", "ANAT-DP", []), ("clear", "OBS-DP", [("located_at", "1")]), ("Effusion", "OBS-DA", [])])
HYP = _annotation([("lungs", "ANAT-DP", []), ("clear", "OBS-DP", []), ("effusion", "OBS-DA", [])])


def test_radgraph_levels_follow_the_reference_rewards():
    # radgraph 0.1.18 compares tokens case-sensitively except inside the complete level's relation tuples
    # simple: {lungs, clear, Effusion} vs {lungs, clear, effusion}: 2 of 3 each way
    assert radgraph_f1(HYP, REF, "simple", case="reference") == pytest.approx(2 / 3)
    # partial: "clear" has a relation in the reference only -> 1 of 3 match
    assert radgraph_f1(HYP, REF, "partial", case="reference") == pytest.approx(1 / 3)
    # complete: reference items {lungs, (clear, located_at, lungs), Effusion}; hypothesis {lungs, clear, effusion}
    assert radgraph_f1(HYP, REF, "complete", case="reference") == pytest.approx(1 / 3)
    assert radgraph_f1(HYP, REF, "all", case="reference") == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    # the default compares tokens case-insensitively at every level
    assert radgraph_f1(HYP, REF, "all") == pytest.approx((1.0, 2 / 3, 2 / 3))
    assert radgraph_f1(HYP, REF, "simple", case="sensitive") == pytest.approx(2 / 3)
    f1, precision, recall = radgraph_scores(_annotation([("lungs", "ANAT-DP", [])]), REF, "simple")
    assert (precision, recall) == (1.0, pytest.approx(1 / 3))


def test_radgraph_empty_side_scores_zero_and_bad_level_fails():
    assert radgraph_f1(_annotation([]), REF, "all") == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="reward level"):
        radgraph_f1(HYP, REF, "strict")


def test_radgraph_identity_on_gold_annotations():
    cases = json.loads(bundled_path("radgraph", "radgraph_expected.json").read_text())["cases"]
    annotation = cases[0]["expected_processed_annotations"]["radgraph_annotations"]["0"]
    assert radgraph_f1(annotation, annotation, "all") == (1.0, 1.0, 1.0)
    assert radgraph_radcliq(annotation, annotation) == 1.0


def test_radgraph_radcliq_averages_entity_and_relation_f1():
    # entities: 2 of 3 match both ways -> 2/3; relations: reference 1, hypothesis 0 -> 0
    assert radgraph_radcliq(HYP, REF) == pytest.approx((2 / 3 + 0) / 2)


def _labels(**positive):
    from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

    return [positive.get(name.replace(" ", "_"), 0) for name in CHEXPERT_CONDITIONS]


def test_chexbert_f1_micro_macro_weighted_and_uncertainty():
    refs = [_labels(Edema=1, Cardiomegaly=1), _labels(Pleural_Effusion=1), _labels(Edema=3)]
    hyps = [_labels(Edema=1), _labels(Pleural_Effusion=1, Pneumonia=1), _labels(Edema=2)]
    scores = chexbert_f1(refs, hyps)
    # positives (uncertain counted): truth Edema x2, Cardiomegaly, Pleural Effusion; predicted Edema, Effusion,
    # Pneumonia tp 2, fp 1, fn 2 -> micro 4 / 7
    assert scores["chexbert_f1_14_micro"] == pytest.approx(4 / 7)
    # per label F1: Edema 2/3, Cardiomegaly 0, Effusion 1, Pneumonia 0, others 0 -> macro (5/3)/14
    assert scores["chexbert_f1_14_macro"] == pytest.approx((2 / 3 + 1) / 14)
    # weighted by support: Edema 2, Cardiomegaly 1, Effusion 1 -> (2*2/3 + 0 + 1) / 4
    assert scores["chexbert_f1_14_weighted"] == pytest.approx((4 / 3 + 1) / 4)
    assert scores["chexbert_f1_5_macro"] == pytest.approx((2 / 3 + 1) / 5)
    strict = chexbert_f1(refs, hyps, uncertain_as_positive=False)
    assert strict["chexbert_f1_14_micro"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    with pytest.raises(ValueError, match="head classes"):
        chexbert_f1([[5] * 14], [[0] * 14])


def test_ratescore_reproduces_the_paper_appendix_example(tmp_path):
    """Seed 001 appendix A.2: W(Anatomy, Anatomy) 0.91, W(Non-Abn, Abn) 0.94, W(Abn, Non-Abn) 0.83, p 0.36,
    cos("in situ", "not in place") 0.83 -> S(x, x^) = 0.644, S(x^, x) = 0.666."""
    types = ["ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE", "ANATOMY"]
    matrix = {f"{a.lower()}_{b.lower()}": 0.5 for a in types for b in types}
    matrix.update(
        {
            "anatomy_anatomy": 0.91,
            "non-abnormality_abnormality": 0.94,
            "abnormality_non-abnormality": 0.83,
            "neg_weight": 0.36,
        }
    )
    path = tmp_path / "example_weight.json"
    path.write_text(json.dumps(matrix))
    ref = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    cand = np.array([[1.0, 0, 0], [0, 0.83, math.sqrt(1 - 0.83**2)]])
    forward = (0.91 + 0.94 * 0.83 * 0.36) / (0.91 + 0.94)
    backward = (0.91 + 0.83 * 0.83 * 0.36) / (0.91 + 0.83)
    assert round(forward, 3) == 0.644 and round(backward, 3) == 0.666
    score = ratescore_from_entities(
        ref, ["ANATOMY", "NON-ABNORMALITY"], cand, ["ANATOMY", "ABNORMALITY"], matrix=str(path)
    )
    assert score == pytest.approx(2 * forward * backward / (forward + backward))


def test_ratescore_empty_side_and_bundled_matrices():
    assert ratescore_from_entities(np.zeros((0, 3)), [], np.ones((1, 3)), ["ANATOMY"]) == 0.5
    same = ratescore_from_entities(
        np.eye(2), ["ANATOMY", "DISEASE"], np.eye(2), ["ANATOMY", "DISEASE"], matrix="short"
    )
    assert same == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown RaTE-NER entity type"):
        ratescore_from_entities(np.eye(1), ["ORGAN"], np.eye(1), ["ANATOMY"])
