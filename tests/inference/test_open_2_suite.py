"""The second open set of issue 61's hardest ranking categories (`open_2.jsonl`): its shape, and that none of its
report texts repeats one of the other suite files. No metric is scored here, and the sealed files' texts are compared
in code only: a failure names this file's cases, never a sealed text."""

from collections import Counter

from radmetrics.inference.meta_evaluation.ranking import default_suite, load_suite

OPEN_2 = "open_2.jsonl"
EXPECTED_COUNTS = {"device_tip_position": 8, "certainty": 8, "measurement": 4, "location_within_organ": 4}
OTHER_FILES = ("suite.jsonl", "sealed.jsonl", "sealed_2.jsonl", "sealed_3.jsonl", "sealed_4.jsonl", "open_3.jsonl")


def _cases(file_name: str):
    return load_suite(default_suite().with_name(file_name))


def _texts(file_name: str) -> set[str]:
    return {text for case in _cases(file_name) for text in (case.reference, *case.candidates)}


def test_open_2_has_the_categories_and_counts_it_was_written_for():
    assert Counter(case.category for case in _cases(OPEN_2)) == EXPECTED_COUNTS


def test_open_2_cases_have_their_ids_distinct_candidates_and_a_reason():
    for case in _cases(OPEN_2):
        assert case.id.startswith(f"open2-{case.category}-"), case.id
        assert case.id.removeprefix(f"open2-{case.category}-").isdigit(), case.id
        assert 2 <= len(case.candidates) <= 4, case.id
        assert len(set(case.candidates)) == len(case.candidates), case.id
        assert case.why.strip(), case.id


def test_open_2_shares_no_report_text_with_the_other_suite_files():
    for other in OTHER_FILES:
        texts = _texts(other)
        repeated = [
            f"{case.id} {'reference' if index == 0 else f'candidate {index}'}"
            for case in _cases(OPEN_2)
            for index, text in enumerate((case.reference, *case.candidates))
            if text in texts
        ]
        assert not repeated, f"{other} holds the same text as: {repeated}"
