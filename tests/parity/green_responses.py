"""GREEN responses, well-formed and malformed, on which radmetrics' parser is compared with RadEval's.

The five responses of GREEN's own tests, and each with the edits models make: a section missing, a section that
starts with "No", the matched count on a later line, numeric markers, a count without its period, a repeated
category line, extra blank lines, or no sections at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ORACLE = Path(__file__).resolve().parents[1] / "data" / "oracles" / "green_expected.json"


def _drop(text: str, title: str) -> str:
    return re.sub(rf"\[{re.escape(title)}\]:.*?(\n\s*\n|\Z)", "", text, flags=re.DOTALL)


def variants(response: str) -> list[str]:
    significant = "[Clinically Significant Errors]:\n"
    matched = "[Matched Findings]:\n"
    return [
        response,
        _drop(response, "Matched Findings"),
        _drop(response, "Clinically Significant Errors"),
        _drop(response, "Clinically Insignificant Errors"),
        response.replace(significant, significant + "No clinically significant errors.\n"),
        response.replace(matched, matched + "Findings:\n"),
        re.sub(r"^\(([a-f])\) ", lambda m: f"({'abcdef'.index(m.group(1)) + 1}) ", response, flags=re.MULTILINE),
        re.sub(r": (\d+)\.", r": \1", response),
        response.replace(significant, significant + "(b) Missing a finding present in the reference: 3. x; y; z.\n"),
        response.replace("\n\n", "\n\n\n"),
        response.replace(matched, matched + "No matched findings.\n"),
    ]


def responses() -> list[str]:
    oracle = json.loads(ORACLE.read_text(encoding="utf-8"))["expected_model_responses"]
    found = [v for response in oracle for v in variants(response)]
    return found + [
        "The candidate report is similar to the reference.",
        "",
        "[Matched Findings]:\n0.",
        (
            "[Clinically Significant Errors]:\n(a) False report of a finding in the candidate: 2. a; b.\n\n"
            "[Matched Findings]:\n4. a; b; c; d."
        ),
    ]
