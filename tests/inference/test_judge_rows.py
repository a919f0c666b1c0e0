"""Issue 61's table as expected decisions of `semantic_green`'s judge: judge=model (the finding-pair judge radmetrics
ships), and the default (judge=rules, the word rules).

Each row is a reference with one finding and a candidate that a radiologist reads as the same finding with an attribute
error: the judge must match the two findings (one matched finding) and name an error on that pair (both its reference
and its candidate finding set), significant where the radiologist calls it so. The word rules miss every row (they see
no error in the first four, and no match in the fifth), so under the default each is a strict xfail: it stays the
default until the judge meets issue 61's gates on radpref_dev (docs/notes/finding-judge.md), and the mark goes when
it does. The right candidates of the same suite cases are the control: the same finding in other words, matched with
no error, by the judge and by the rules.
"""

import pytest

from radmetrics.inference.scoring.scorer import Scorer

MISSED = pytest.mark.xfail(strict=True, reason="the word rules (the default) miss it; judge=model decides it")

# (suite case, reference, candidate with the attribute error, significant: True, False, or None when the table
# leaves it open, the GREEN category when the table names one)
ROWS = [
    ("meas-1", "8 mm nodule in the right lower lobe.", "18 mm nodule in the right lower lobe.", True, None),
    (
        "tip-1",
        "Endotracheal tube terminates 4 cm above the carina.",
        "Endotracheal tube terminates 1 cm below the carina, in the right mainstem bronchus.",
        True,
        None,
    ),
    ("cert-1", "Right upper lobe pneumonia.", "Possible right upper lobe pneumonia.", None, None),
    ("spec-1", "Right upper lobe pneumonia.", "Right upper lobe opacity.", None, None),
    ("part-1", "Moderate right pleural effusion.", "Large right pleural effusion.", None, "d"),
]

# (suite case, reference, the case's best candidate: the same finding in other words)
CONTROLS = [
    ("meas-1", "8 mm nodule in the right lower lobe.", "Right lower lobe nodule measuring 8 mm."),
    ("tip-1", "Endotracheal tube terminates 4 cm above the carina.", "ETT tip approximately 4 cm above the carina."),
    ("cert-1", "Right upper lobe pneumonia.", "Pneumonia in the right upper lobe."),
    ("spec-1", "Right upper lobe pneumonia.", "RUL pneumonia."),
    ("part-1", "Moderate right pleural effusion.", "Moderate-sized right pleural effusion."),
]


JUDGES = {"model": {"semantic_green": {"judge": "model"}}, "default": {}}


@pytest.fixture(scope="module", params=sorted(JUDGES))
def judged(request):
    """(per-sample values, semantic_green detail) of every row and control, by (case, candidate); one scoring run per
    judge."""
    pairs = [(case, reference, candidate) for case, reference, candidate, *_ in ROWS] + CONTROLS
    scorer = Scorer(["semantic_green"], metric_options=JUDGES[request.param], n_bootstrap=0)
    result = scorer([p[1] for p in pairs], [p[2] for p in pairs])
    details = result.details["semantic_green"]
    rows = {(case, candidate): (result.per_sample[i], details[i]) for i, (case, _, candidate) in enumerate(pairs)}
    return request.param, rows


def test_every_row_and_control_is_the_suite_case_it_names():
    from radmetrics.inference.meta_evaluation.ranking import load_suite

    cases = {case.id: case for case in load_suite()}
    for case, reference, candidate, *_ in ROWS:
        assert cases[case].reference == reference and candidate in cases[case].candidates[1:]
    for case, reference, candidate in CONTROLS:
        assert cases[case].reference == reference and cases[case].candidates[0] == candidate


@pytest.mark.parametrize(
    ("case", "reference", "candidate", "significant", "category"),
    [pytest.param(*row, id=row[0]) for row in ROWS],
)
def test_the_judge_matches_the_finding_and_names_its_attribute_error(
    request, judged, case, reference, candidate, significant, category
):
    judge, rows = judged
    if judge == "default":
        request.applymarker(MISSED)
    values, detail = rows[(case, candidate)]
    assert values["semantic_green_matched_findings"] == 1, "the reference's finding is the candidate's"
    on_the_pair = [e for e in detail["errors"] if e["reference"] is not None and e["candidate"] is not None]
    assert len(on_the_pair) == 1, f"one attribute error on the matched pair, got {detail['errors']}"
    error = on_the_pair[0]
    if significant is not None:  # the table names the significance of the first two rows only
        assert error["significant"] is significant
        assert values["semantic_green_significant_errors"] >= 1 and values["semantic_green"] < 1
    if category is not None:
        assert error["category"] == category


@pytest.mark.parametrize(("case", "reference", "candidate"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_the_same_finding_in_other_words_is_matched_with_no_error(judged, case, reference, candidate):
    values, detail = judged[1][(case, candidate)]
    assert values["semantic_green_matched_findings"] == 1
    assert detail["errors"] == []
    assert values["semantic_green"] == 1
