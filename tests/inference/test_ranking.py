"""The clinical ranking suite and `radmetrics meta-eval ranking`."""

import json
import math

import pytest

from radmetrics.inference.cli import main
from radmetrics.inference.meta_evaluation.ranking import SuiteError, case_order, load_suite, pairs, ranking_report


def test_the_bundled_suite_has_40_cases_in_8_categories_with_2_to_4_candidates():
    cases = load_suite()
    categories = {case.category for case in cases}
    assert len(cases) >= 40 and len(categories) >= 8
    assert all(2 <= len(case.candidates) <= 4 for case in cases)
    assert all(sum(case.category == c for case in cases) >= 4 for c in categories)


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
    assert main(["meta-eval", "ranking", "--metrics", "rougeL", "--out", str(out)]) == 0
    report = json.loads((out / "ranking.json").read_text())
    entry = report["keys"]["rougeL"]
    assert report["cases"] == len(load_suite()) and set(entry["categories"]) >= {"laterality", "negation"}
    assert 0 < entry["all"]["pairwise_accuracy"] < 1
    assert "| rougeL |" in capsys.readouterr().out and (out / "ranking.md").is_file()
