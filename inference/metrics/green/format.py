"""GREEN prompt, response format, parser and score (Ostmeier et al. 2024, appendix A.1/A.2, section 3.2).

Defined once here and used by the programmatic teacher (data_builders), the SFT recipe (training) and
GREEN scoring (inference), so a teacher annotation and a model generation are read by the same parser.

Parsing follows Stanford-AIMI/GREEN `parse_error_counts`: a section runs from its `[Title]:` header to the
next blank line; sub-category counts are read from lines starting "(a) ... : N." (or "(1)".."(6)"), the
matched count from a leading "N.". Where the reference silently counts a missing section as 0, this
parser (strict=True, the default) reports the response as unparsed so callers can count it; strict=False
reproduces the reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CATEGORY_LETTERS = ("a", "b", "c", "d", "e", "f")
CATEGORIES = {
    "a": "False report of a finding in the candidate",
    "b": "Missing a finding present in the reference",
    "c": "Misidentification of a finding's anatomic location/position",
    "d": "Misassessment of the severity of a finding",
    "e": "Mentioning a comparison that isn't in the reference",
    "f": "Omitting a comparison detailing a change from a prior study",
}
SIGNIFICANT = "Clinically Significant Errors"
INSIGNIFICANT = "Clinically Insignificant Errors"
MATCHED = "Matched Findings"
EXPLANATION = "Explanation"


def green_prompt(reference: str, candidate: str) -> str:
    """The GREEN instruction of appendix A.1 with both reports filled in."""
    criteria = "\n".join(f"{letter}) {text}." for letter, text in CATEGORIES.items())
    return (
        "Objective: Evaluate the accuracy of a candidate radiology report in comparison to a reference radiology "
        "report composed by expert radiologists.\n\n"
        "Process Overview: You will be presented with:\n\n"
        "1. The criteria for making a judgment.\n"
        "2. The reference radiology report.\n"
        "3. The candidate radiology report.\n"
        "4. The desired format for your assessment.\n\n"
        "1. Criteria for Judgment:\n\n"
        "For each candidate report, determine:\n\n"
        "The count of clinically significant errors.\n"
        "The count of clinically insignificant errors.\n\n"
        "Errors can fall into one of these categories:\n\n"
        f"{criteria}\n\n"
        "Note: Concentrate on the clinical findings rather than the report's writing style. "
        "Evaluate only the findings that appear in both reports.\n\n"
        f"2. Reference Report:\n{reference}\n\n"
        f"3. Candidate Report:\n{candidate}\n\n"
        "4. Reporting Your Assessment:\n\n"
        "Follow this specific format for your output, even if no errors are found:\n"
        "```\n"
        "[Explanation]:\n<Explanation>\n\n"
        "[Clinically Significant Errors]:\n"
        "(a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n....\n"
        "(f) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n\n"
        "[Clinically Insignificant Errors]:\n"
        "(a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n....\n"
        "(f) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n\n"
        "[Matched Findings]:\n"
        "<The number of matched findings>. <Finding 1>; <Finding 2>; ...; <Finding n>\n"
        "```\n"
    )


def _strip_period(text: str) -> str:
    return " ".join(text.split()).rstrip(". ;")


def render_green_response(explanation: str, significant: dict[str, list[str]], insignificant: dict[str, list[str]],
                          matched: list[str]) -> str:
    """A response in the exact format of appendix A.2 (one line per category, errors joined by '; ')."""

    def section(errors: dict[str, list[str]]) -> str:
        lines = []
        for letter in CATEGORY_LETTERS:
            items = [_strip_period(e) for e in errors.get(letter, [])]
            detail = f" {'; '.join(items)}." if items else ""
            lines.append(f"({letter}) {CATEGORIES[letter]}: {len(items)}.{detail}")
        return "\n".join(lines)

    found = [_strip_period(m) for m in matched]
    matched_line = f"{len(found)}." + (f" {'; '.join(found)}." if found else "")
    return (f"[{EXPLANATION}]:\n{' '.join(explanation.split())}\n\n[{SIGNIFICANT}]:\n{section(significant)}\n\n"
            f"[{INSIGNIFICANT}]:\n{section(insignificant)}\n\n[{MATCHED}]:\n{matched_line}")


@dataclass
class GreenParse:
    significant: tuple[int, ...]
    insignificant: tuple[int, ...]
    matched: int
    parsed: bool = True
    problems: list[str] = field(default_factory=list)

    @property
    def significant_total(self) -> int:
        return sum(self.significant)

    @property
    def score(self) -> float | None:
        """matched / (matched + significant errors (a)-(f)); 0 when nothing matched; None when unparsed."""
        if not self.parsed:
            return None
        if self.matched == 0:
            return 0.0
        return self.matched / (self.matched + self.significant_total)


def _section(text: str, title: str) -> str | None:
    match = re.search(rf"\[{re.escape(title)}\]:\s*(.*?)(?:\n\s*\n|\Z)", text, re.DOTALL)
    return match.group(1) if match else None


def _category_counts(body: str) -> tuple[int, ...]:
    counts = [0] * 6
    lines = sorted(re.findall(r"\([a-f]\) .*", body))
    prefixes = [f"({letter}) " for letter in CATEGORY_LETTERS]
    if not lines:
        lines = sorted(re.findall(r"\([1-6]\) .*", body))
        prefixes = [f"({i}) " for i in range(1, 7)]
    for position, prefix in enumerate(prefixes):
        for line in lines:
            if line.startswith(prefix):
                found = re.findall(r"(?<=: )\b\d+\b(?=\.)", line)
                if found:
                    counts[position] = int(found[0])
    return tuple(counts)


def parse_green_response(text: str, strict: bool = True) -> GreenParse:
    """Significant counts (a)-(f), insignificant counts (a)-(f) and the matched count of one response."""
    problems = []
    bodies = {}
    for title in (SIGNIFICANT, INSIGNIFICANT, MATCHED):
        bodies[title] = _section(text or "", title)
        if bodies[title] is None:
            problems.append(f"no [{title}] section")
    sig = () if bodies[SIGNIFICANT] is None else _category_counts(bodies[SIGNIFICANT])
    insig = () if bodies[INSIGNIFICANT] is None else _category_counts(bodies[INSIGNIFICANT])
    matched = 0
    if bodies[MATCHED] is not None and not bodies[MATCHED].startswith("No"):
        found = re.findall(r"^\b\d+\b(?=\.)", bodies[MATCHED])
        if found:
            matched = int(found[0])
        elif strict:
            problems.append(f"[{MATCHED}] does not start with a count")
    for title, body in ((SIGNIFICANT, bodies[SIGNIFICANT]), (INSIGNIFICANT, bodies[INSIGNIFICANT])):
        if body is not None and not body.startswith("No") and not re.search(r"\(([a-f]|[1-6])\) ", body) and strict:
            problems.append(f"[{title}] lists no categories")
    parsed = not problems if strict else True
    return GreenParse(sig or (0,) * 6, insig or (0,) * 6, matched, parsed, problems)
