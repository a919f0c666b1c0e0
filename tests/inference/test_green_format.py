import json

import pytest

from radmetrics.inference.metrics.green.format import (
    CATEGORY_LETTERS,
    green_prompt,
    parse_green_response,
    render_green_response,
)

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


@pytest.fixture(scope="module")
def oracle(test_data):
    return json.loads((test_data / "oracles" / "green_expected.json").read_text())


def test_parser_reproduces_upstream_oracle(oracle):
    import numpy as np

    scores = []
    for response, expected in zip(oracle["expected_model_responses"], oracle["derived_per_sample"]):
        parsed = parse_green_response(response)
        assert parsed.parsed, parsed.problems
        assert parsed.significant_total == expected["sig_error_total"]
        assert parsed.matched == expected["matched_findings"]
        assert parsed.score == pytest.approx(expected["green"])
        scores.append(parsed.score)
    assert np.mean(scores) == pytest.approx(oracle["expected_mean"])
    assert np.std(scores) == pytest.approx(oracle["expected_std"])


def test_render_then_parse_round_trips():
    sig = {
        "c": ["The infiltrates are in the upper middle right field, not the upper dorsal right field."],
        "b": ["Cardiomegaly", "Effusion"],
    }
    insig = {"e": ["Mentions a prior study"]}
    text = render_green_response(
        "Location error.", sig, insig, ["Costophrenic sinuses are clear", "No other notable findings"]
    )
    parsed = parse_green_response(text)
    assert parsed.parsed
    assert parsed.significant == (0, 2, 1, 0, 0, 0) and parsed.insignificant == (0, 0, 0, 0, 1, 0)
    assert parsed.matched == 2 and parsed.score == pytest.approx(2 / 5)


def test_appendix_a2_example():
    response = """[Explanation]:
The candidate report misidentifies the anatomic location of the infiltrates.

[Clinically Significant Errors]:
(c) Misidentification of a finding's anatomic location/position: 1. The infiltrates are in the upper middle right \
field, not the upper dorsal right field.

[Clinically Insignificant Errors]:
- (a) False report of a finding in the candidate: 0.
- (b) Missing a finding present in the reference: 0.

[Matched Findings]:
3. Doubtful retrocardiac suggestive of respiratory infection; Costophrenic sinuses are clear; No other notable \
findings."""
    parsed = parse_green_response(response)
    assert parsed.significant == (0, 0, 1, 0, 0, 0) and parsed.matched == 3 and parsed.score == 0.75


def test_unparsable_is_reported_not_zero():
    parsed = parse_green_response("I think the reports are similar.")
    assert not parsed.parsed and parsed.score is None and "no [Matched Findings] section" in parsed.problems
    lenient = parse_green_response("I think the reports are similar.", strict=False)
    assert lenient.parsed and lenient.score == 0.0  # the reference implementation's behaviour


def test_short_prompt_carries_both_reports_and_unknown_prompts_are_refused():
    from radmetrics.inference.metrics.green.generation import green_messages

    [message] = green_messages("REF TEXT " * 400, "CAND TEXT", prompt="short")
    assert "Reference report: REF TEXT" in message["content"] and "Candidate report: CAND TEXT\n" in message["content"]
    assert message["content"].count("REF") == 150  # cut to 300 words, as GREEN's prompt is
    assert (
        len(green_prompt("REF TEXT " * 400, "CAND TEXT")) - len(message["content"]) > 1500
    )  # appendix A.1's instructions
    with pytest.raises(ValueError, match="expected one of"):
        green_messages("a", "b", prompt="long")


def test_prompt_carries_reports_and_categories():
    prompt = green_prompt("REF TEXT", "CAND TEXT")
    assert "2. Reference Report:\n    REF TEXT" in prompt and "3. Candidate Report:\n    CAND TEXT" in prompt
    assert all(f"{letter}) " in prompt for letter in CATEGORY_LETTERS)
