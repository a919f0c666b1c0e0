"""The ranking suite's other files for issue 61's categories: the open sets (open_2.jsonl ... open_4.jsonl) and the
sealed halves (sealed.jsonl ... sealed_12.jsonl). Their shape, and that no file repeats a report text of a file written
before it. No metric is scored here, and the sealed files' texts are compared in code only: a failure names an open
file's cases, and only counts a sealed file's."""

from collections import Counter

import pytest

from radmetrics.inference.meta_evaluation.ranking import JUDGE_CATEGORIES, default_suite, load_suite

SIX_EACH = dict.fromkeys(JUDGE_CATEGORIES, 6)
OPEN_2_COUNTS = {"device_tip_position": 8, "certainty": 8, "measurement": 4, "location_within_organ": 4}
OPEN_4_COUNTS = {"certainty": 12, "specificity": 12}
# (file, id prefix, cases per category), in the order they were written.
FILES = (
    ("sealed.jsonl", "sealed", SIX_EACH),
    ("sealed_2.jsonl", "sealed2", SIX_EACH),
    ("sealed_3.jsonl", "sealed3", SIX_EACH),
    ("open_2.jsonl", "open2", OPEN_2_COUNTS),
    ("sealed_4.jsonl", "sealed4", SIX_EACH),
    ("open_3.jsonl", "open3", SIX_EACH),
    ("sealed_5.jsonl", "sealed5", SIX_EACH),
    ("open_4.jsonl", "open4", OPEN_4_COUNTS),
    ("sealed_6.jsonl", "sealed6", SIX_EACH),
    ("sealed_7.jsonl", "sealed7", SIX_EACH),
    ("sealed_8.jsonl", "sealed8", SIX_EACH),
    ("sealed_9.jsonl", "sealed9", SIX_EACH),
    ("sealed_10.jsonl", "sealed10", SIX_EACH),
    ("sealed_11.jsonl", "sealed11", SIX_EACH),
    ("sealed_12.jsonl", "sealed12", SIX_EACH),
)


def _cases(file_name: str):
    return load_suite(default_suite().with_name(file_name))


def _texts(file_name: str) -> set[str]:
    return {text for case in _cases(file_name) for text in (case.reference, *case.candidates)}


@pytest.mark.parametrize("file_name, prefix, counts", FILES, ids=[f for f, _, _ in FILES])
def test_each_file_has_its_categories_ids_distinct_candidates_and_reasons(file_name, prefix, counts):
    cases = _cases(file_name)
    assert Counter(case.category for case in cases) == counts
    for case in cases:
        assert case.id.startswith(f"{prefix}-{case.category}-"), case.id
        assert case.id.removeprefix(f"{prefix}-{case.category}-").isdigit(), case.id
        assert 2 <= len(case.candidates) <= 4 and len(set(case.candidates)) == len(case.candidates), case.id
        assert case.why.strip(), case.id


@pytest.mark.parametrize("position", range(1, len(FILES)), ids=[f for f, _, _ in FILES[1:]])
def test_no_file_repeats_a_report_text_of_the_open_suite_or_an_earlier_file(position):
    file_name = FILES[position][0]
    earlier = set().union(_texts("suite.jsonl"), *(_texts(name) for name, _, _ in FILES[:position]))
    repeated = [
        f"{case.id} {'reference' if index == 0 else f'candidate {index}'}"
        for case in _cases(file_name)
        for index, text in enumerate((case.reference, *case.candidates))
        if text in earlier
    ]
    if file_name.startswith("sealed"):
        assert not repeated, f"{len(repeated)} texts of {file_name} repeat an earlier file's"
    assert not repeated, repeated
