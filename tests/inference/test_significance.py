"""Clinical significance per finding (inference/findings/significance.py), semantic_green's weighted keys, and the
agreement commands that measure them against RadPref's radiologists."""

import json

import pytest

from radmetrics.inference.findings.significance import age_of, names_term, significance, weight
from radmetrics.inference.scoring.scorer import Scorer


@pytest.mark.parametrize(
    ("finding", "context", "level"),
    [
        ("Large right pneumothorax.", None, "urgent"),
        ("Small right apical pneumothorax.", None, "actionable_not_urgent"),
        ("Endotracheal tube malpositioned in the right mainstem bronchus.", None, "urgent"),
        ("Endotracheal tube terminates 4 cm above the carina.", None, "not_actionable_not_urgent"),
        ("Left lower lobe consolidation versus atelectasis.", None, "actionable_not_urgent"),
        ("Bibasilar atelectasis.", None, "not_actionable_not_urgent"),
        ("Trace left pleural effusion.", None, "not_actionable_not_urgent"),
        ("Healed left rib fractures.", None, "not_actionable_not_urgent"),  # CRIMSON: benign; here: chronic
        ("Vertebral augmentation of T10.", None, "benign_expected"),
        ("Aortic atherosclerotic calcification.", {"PatientAge": "082Y"}, "benign_expected"),
        ("Aortic atherosclerotic calcification.", {"Age": "25"}, "not_actionable_not_urgent"),
        ("Something no rule names.", None, "actionable_not_urgent"),
    ],
)
def test_levels_follow_crimsons_examples(finding, context, level):
    assert significance(finding, context) == level


def test_names_term_is_a_named_level_not_the_default():
    assert names_term("Improving airspace disease in the right lung")
    assert names_term("The bones are osteopenic") and names_term("Surgical drain in place")
    assert not names_term("Something no rule names.")  # DEFAULT's level is not a named term
    assert not names_term("Gastric bubble")  # a benign term is not one
    assert not names_term("The patient is a 72-year-old male") and not names_term("a 65 years old woman")
    assert names_term("Old healed left rib fracture")


def test_age_is_read_from_any_age_field():
    assert (
        age_of({"PatientAge": "072Y"}) == 72
        and age_of({"Age": "8 years"}) == 8
        and age_of({"Indication": "x"}) is None
    )
    assert [
        weight(x) for x in ("urgent", "actionable_not_urgent", "not_actionable_not_urgent", "benign_expected")
    ] == [
        1.0,
        0.5,
        0.25,
        0.0,
    ]


def test_a_benign_omission_costs_less_than_an_urgent_one():
    scorer = Scorer(["semantic_green"], n_bootstrap=0, metric_options={"semantic_green": {"progress": False}})
    reference = "Large right pneumothorax. Calcified granuloma in the left upper lobe."
    result = scorer(
        [reference, reference, reference],
        ["Large right pneumothorax.", "Calcified granuloma in the left upper lobe.", reference],
        context=[{"Age": "70"}] * 3,
    )
    benign, urgent, same = result.per_sample
    assert benign["semantic_green_weighted_errors"] == 0.0 and urgent["semantic_green_weighted_errors"] == 1.0
    assert benign["semantic_green_weighted"] == 1.0 > urgent["semantic_green_weighted"] == 0.5
    assert benign["semantic_green_significant_errors"] == urgent["semantic_green_significant_errors"] == 1.0
    assert same["semantic_green_weighted"] == 1.0 and same["semantic_green_weighted_errors"] == 0.0
    error = result.details["semantic_green"][1]["errors"][0]
    assert (error["level"], error["weight"]) == ("urgent", 1.0)
    assert "semantic_green_weighted" in result.signatures


def test_the_significance_command_reports_kappa_beside_the_raters(tmp_path, capsys):
    from radmetrics.inference.cli import main

    assert main(["meta-eval", "significance", "--part", "develop", "--bootstrap", "50", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "significance_agreement.json").read_text())
    assert report["items_with_a_majority_level"] >= 100 and 0.7 < report["weighted_kappa"] <= 1
    low, high = report["weighted_kappa_ci95"]
    assert low < report["weighted_kappa"] < high and len(report["raters"]) == 3
    assert set(report["raters_counts_against_their_rating"]) == {"plain", "crimson_weighted"}
    assert (
        sum(sum(row.values()) for row in report["confusion_gold_by_predicted"].values())
        == report["items_with_a_majority_level"]
    )
    assert "weighted kappa" in capsys.readouterr().out
