"""The clinical ranking suite and `radmetrics meta-eval ranking`."""

import json
import math

import pytest

from radmetrics.inference.cli import main
from radmetrics.inference.meta_evaluation.ranking import SuiteError, case_order, load_suite, pairs, ranking_report

ATTRIBUTE_CATEGORIES = {
    "measurement": "meas",
    "device_tip_position": "tip",
    "certainty": "cert",
    "specificity": "spec",
    "location_within_organ": "loc",
    "partial_credit": "part",
}

# Issue 61's table: (reference, the candidate a radiologist marks wrong, the case that holds the pair).
ISSUE_61_ROWS = [
    ("8 mm nodule in the right lower lobe.", "18 mm nodule in the right lower lobe.", "meas-1"),
    (
        "Endotracheal tube terminates 4 cm above the carina.",
        "Endotracheal tube terminates 1 cm below the carina, in the right mainstem bronchus.",
        "tip-1",
    ),
    ("Right upper lobe pneumonia.", "Possible right upper lobe pneumonia.", "cert-1"),
    ("Right upper lobe pneumonia.", "Right upper lobe opacity.", "spec-1"),
    ("Moderate right pleural effusion.", "Large right pleural effusion.", "part-1"),
]


def test_the_bundled_suite_has_85_cases_in_16_categories_with_2_to_4_candidates():
    cases = load_suite()
    categories = {case.category for case in cases}
    assert len(cases) == 85 and len(categories) == 16
    assert all(2 <= len(case.candidates) <= 4 for case in cases)
    assert all(sum(case.category == c for case in cases) >= 4 for c in categories)
    assert all(case.why.strip() for case in cases)


def test_the_attribute_categories_have_six_open_cases_each_named_by_their_short_category():
    cases = load_suite()
    for category, short in ATTRIBUTE_CATEGORIES.items():
        ids = sorted(case.id for case in cases if case.category == category)
        assert len(ids) >= 6, category
        assert all(i.startswith(f"{short}-") for i in ids), ids


@pytest.mark.parametrize(("reference", "wrong", "case_id"), ISSUE_61_ROWS, ids=[row[2] for row in ISSUE_61_ROWS])
def test_the_rows_of_issue_61_are_cases_with_the_wrong_candidate_ranked_below_a_right_one(reference, wrong, case_id):
    case = {case.id: case for case in load_suite()}[case_id]
    assert case.reference == reference
    assert wrong in case.candidates[1:], "the table's candidate must follow a better one"


def test_case_order_counts_ties_half_and_missing_values_wrong():
    assert case_order([3.0, 2.0, 1.0]) == (3.0, 3, True)
    assert case_order([1.0, 2.0]) == (0.0, 1, False)
    assert case_order([1.0, 1.0]) == (0.5, 1, False)
    assert case_order([math.nan, 1.0]) == (0.0, 1, False)


def test_report_per_category(tmp_path):
    suite = tmp_path / "suite.jsonl"
    rows = [
        {"id": "a", "category": "x", "reference": "r", "candidates": ["good", "bad"]},
        {"id": "b", "category": "y", "reference": "r", "candidates": ["good", "mid", "bad"]},
    ]
    suite.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases = load_suite(suite)
    assert pairs(cases)[2] == ["a #1", "a #2", "b #1", "b #2", "b #3"]
    report = ranking_report(cases, {"k": [1, 0, 2, 3, 1]})["k"]
    assert report["categories"]["x"] == {"pairwise_accuracy": 1.0, "exact_order": 1.0, "cases": 1, "pairs": 1}
    assert report["categories"]["y"]["pairwise_accuracy"] == pytest.approx(2 / 3)
    assert report["all"]["pairwise_accuracy"] == pytest.approx(3 / 4) and report["all"]["exact_order"] == 0.5


def test_intervals_resample_cases_the_same_way_for_every_key(tmp_path):
    suite = tmp_path / "suite.jsonl"
    rows = [
        {"id": str(i), "category": "x" if i < 4 else "y", "reference": "r", "candidates": ["a", "b"]} for i in range(8)
    ]
    suite.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases = load_suite(suite)
    right, wrong = [1, 0], [0, 1]
    values = {"k": right * 6 + wrong * 2, "same": right * 6 + wrong * 2, "perfect": right * 8}
    report = ranking_report(cases, values, n_bootstrap=200, seed=3)
    low, high = report["k"]["all"]["ci95"]
    assert low <= report["k"]["all"]["pairwise_accuracy"] == 0.75 <= high and low < high
    assert report["k"]["all"]["ci95"] == report["same"]["all"]["ci95"]
    assert report["perfect"]["all"]["ci95"] == [1.0, 1.0] and report["k"]["categories"]["x"]["ci95"] == [1.0, 1.0]
    assert report["k"]["categories"]["y"]["ci95"][0] < 1.0
    assert ranking_report(cases, values)["k"]["all"].keys() == {"pairwise_accuracy", "exact_order", "cases", "pairs"}


def test_a_negative_bootstrap_is_refused_before_anything_loads(tmp_path, capsys):
    out = tmp_path / "ranking"
    assert main(["meta-eval", "ranking", "--metrics", "rougeL", "--bootstrap", "-1", "--out", str(out)]) == 2
    assert "--bootstrap -1" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "category": "x", "reference": "r", "candidates": ["one"]}', "at least 2 texts"),
        ("not json", "line 1 is not JSON"),
        ('{"id": "a", "category": "", "reference": "r", "candidates": ["1", "2"]}', "category must be"),
    ],
)
def test_a_malformed_suite_is_refused_naming_the_line(tmp_path, content, message):
    suite = tmp_path / "suite.jsonl"
    suite.write_text(content + "\n")
    with pytest.raises(SuiteError, match=message):
        load_suite(suite)


def test_the_command_ranks_with_any_metric(tmp_path, capsys):
    out = tmp_path / "ranking"
    assert main(["meta-eval", "ranking", "--metrics", "rougeL", "--bootstrap", "50", "--out", str(out)]) == 0
    report = json.loads((out / "ranking.json").read_text())
    entry = report["keys"]["rougeL"]
    assert report["cases"] == len(load_suite()) and set(entry["categories"]) >= {"laterality", "negation"}
    assert 0 < entry["all"]["pairwise_accuracy"] < 1
    assert entry["all"]["ci95"][0] <= entry["all"]["pairwise_accuracy"] <= entry["all"]["ci95"][1]
    assert report["bootstrap"] == {"resamples": 50, "seed": 0, "unit": "case"}
    assert "| rougeL |" in capsys.readouterr().out and (out / "ranking.md").is_file()
