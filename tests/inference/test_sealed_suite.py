"""The sealed halves of issue 61's ranking categories (sealed.jsonl, sealed_2.jsonl, sealed_3.jsonl, sealed_4.jsonl):
their shape only (their cases are not read or scored here)."""

from collections import Counter

from radmetrics.inference.meta_evaluation.ranking import default_suite, load_suite

SEALED_CATEGORIES = {
    "measurement",
    "device_tip_position",
    "certainty",
    "specificity",
    "location_within_organ",
    "partial_credit",
}


def _assert_sealed_shape(file_name: str, id_prefix: str) -> None:
    cases = load_suite(default_suite().with_name(file_name))
    assert Counter(case.category for case in cases) == {category: 6 for category in SEALED_CATEGORIES}
    for case in cases:
        assert case.id.startswith(f"{id_prefix}-{case.category}-"), case.id
        assert 2 <= len(case.candidates) <= 4 and len(set(case.candidates)) == len(case.candidates), case.id
        assert case.why.strip(), case.id


def _texts(file_name: str) -> set[str]:
    return {
        text
        for case in load_suite(default_suite().with_name(file_name))
        for text in (case.reference, *case.candidates)
    }


def test_the_sealed_suite_has_six_cases_in_each_new_category_with_distinct_candidates():
    _assert_sealed_shape("sealed.jsonl", "sealed")


def test_the_second_sealed_suite_has_six_cases_in_each_new_category_with_distinct_candidates():
    _assert_sealed_shape("sealed_2.jsonl", "sealed2")


def test_the_second_sealed_suite_shares_no_report_text_with_the_open_suite_or_the_first_sealed_half():
    shared = _texts("sealed_2.jsonl") & (_texts("suite.jsonl") | _texts("sealed.jsonl"))
    assert not shared, sorted(shared)


def test_the_third_sealed_suite_has_six_cases_in_each_new_category_with_distinct_candidates():
    _assert_sealed_shape("sealed_3.jsonl", "sealed3")


def test_the_third_sealed_suite_shares_no_report_text_with_the_open_suite_or_the_earlier_sealed_halves():
    shared = _texts("sealed_3.jsonl") & (_texts("suite.jsonl") | _texts("sealed.jsonl") | _texts("sealed_2.jsonl"))
    assert not shared, sorted(shared)


def test_the_fourth_sealed_suite_has_six_cases_in_each_new_category_with_distinct_candidates():
    _assert_sealed_shape("sealed_4.jsonl", "sealed4")


def test_the_fourth_sealed_suite_shares_no_report_text_with_the_open_suites_or_the_earlier_sealed_halves():
    others = set().union(
        *(_texts(name) for name in ("suite.jsonl", "sealed.jsonl", "sealed_2.jsonl", "sealed_3.jsonl", "open_2.jsonl"))
    )
    shared = _texts("sealed_4.jsonl") & others
    assert not shared, f"{len(shared)} texts of sealed_4.jsonl repeat another suite file's"
