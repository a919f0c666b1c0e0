"""A user's own label set in an export: accepted in the schema's shape, and RaTEScore's handling of an entity type its
affinity matrix lacks (a documented weight, or a one-line refusal before any model loads)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from radmetrics.inference.loading.components import get_component, iob_labels
from radmetrics.inference.metrics.base import OptionError
from radmetrics.inference.metrics.ratescore.entity_types import with_other_types
from radmetrics.inference.metrics.ratescore.score import load_affinity, pair_matches, score_from_matches
from radmetrics.inference.scoring.scorer import Scorer

SIX = ("ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE", "ANATOMY", "DEVICE")


@pytest.mark.parametrize(
    ("component", "label_map"),
    [
        ("rate_ner_iob", {"labels": iob_labels(SIX)}),
        ("rate_ner_span", {"labels": ["NULL", *SIX], "max_span_width": 8}),
        ("radgraph", {"entities": ["NULL", "ANAT-DP", "OBS-DP", "DEVICE"], "relations": ["NULL", "modify"]}),
    ],
)
def test_a_users_label_lists_in_the_schemas_shape_are_accepted(component, label_map):
    assert get_component(component).label_map_problem(label_map) is None


@pytest.mark.parametrize(
    ("component", "label_map", "problem"),
    [
        ("rate_ner_iob", {"labels": ["B-DEVICE", "O", "I-DEVICE"]}, "must start with 'O'"),
        ("rate_ner_iob", {"labels": ["O", "I-DEVICE", "B-DEVICE"]}, "O then B-/I- per type"),
        ("rate_ner_span", {"labels": ["NULL", "DEVICE"], "max_span_width": 4}, "'max_span_width' must be 8"),
        ("rate_ner_span", {"labels": ["NULL", "DEVICE", "DEVICE"], "max_span_width": 8}, "distinct"),
        ("radgraph", {"entities": ["ANAT-DP", "NULL"], "relations": ["NULL"]}, "must start with 'NULL'"),
        ("chexbert", {"conditions": ["Edema"], "classes": [], "no_finding_classes": []}, "expected"),
    ],
)
def test_a_label_map_out_of_shape_is_refused(component, label_map, problem):
    assert problem in get_component(component).label_map_problem(label_map)


def fake_export(tmp_path, types) -> str:
    (tmp_path / "radmetrics.json").write_text(json.dumps({"label_map": {"labels": iob_labels(tuple(types))}}))
    return str(tmp_path)


def test_ratescore_refuses_an_export_with_a_type_its_matrix_lacks_before_loading(tmp_path):
    export = fake_export(tmp_path, SIX)
    with pytest.raises(
        OptionError, match=r"tags entity type\(s\) \['DEVICE'\].*ratescore.other_type_weight"
    ) as refused:
        Scorer(["ratescore"], {"rate_ner_iob": export})
    assert "\n" not in str(refused.value)
    Scorer(["ratescore"], {"rate_ner_iob": export}, metric_options={"ratescore": {"other_type_weight": 0.3}})
    Scorer(["ratescore"], {"rate_ner_iob": fake_export(tmp_path, SIX[:5])})  # RaTE's own types need nothing


def test_other_type_weight_weighs_every_pair_with_the_new_type():
    weights, neg_weight = load_affinity("long")
    extended = with_other_types(weights, {"DEVICE", "ANATOMY"}, 0.25, "long")
    assert (
        extended[("DEVICE", "ANATOMY")]
        == extended[("ABNORMALITY", "DEVICE")]
        == extended[("DEVICE", "DEVICE")]
        == 0.25
    )
    assert {k: v for k, v in extended.items() if "DEVICE" not in k} == weights
    with pytest.raises(OptionError, match="other_type_weight"):
        with_other_types(weights, {"DEVICE"}, None, "long")
    same = np.eye(2)
    matches = pair_matches(same, ["DEVICE", "ANATOMY"], same, ["DEVICE", "ANATOMY"], {*SIX})
    assert score_from_matches(*matches, extended, neg_weight) == pytest.approx(1.0)
