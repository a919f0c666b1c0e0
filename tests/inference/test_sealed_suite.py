"""The sealed half of issue 61's ranking categories: its shape only (its cases are not read or scored here)."""

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


def test_the_sealed_suite_has_six_cases_in_each_new_category_with_distinct_candidates():
    cases = load_suite(default_suite().with_name("sealed.jsonl"))
    assert Counter(case.category for case in cases) == {category: 6 for category in SEALED_CATEGORIES}
    for case in cases:
        assert case.id.startswith(f"sealed-{case.category}-"), case.id
        assert 2 <= len(case.candidates) <= 4 and len(set(case.candidates)) == len(case.candidates), case.id
        assert case.why.strip(), case.id
