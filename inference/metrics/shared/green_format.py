"""GREEN prompt, response format, parser and score (Ostmeier et al. 2024, appendix A.1/A.2, section 3.2).

Defined once here and used by the programmatic teacher (data_builders), the SFT recipe (training) and
GREEN scoring (inference), so a teacher annotation and a model generation are read by the same parser.

Parsing follows `parse_error_counts` of radeval 2.2.1's GREEN (its copy of Stanford-AIMI/GREEN): a section runs
from its `[Title]:` header to the next blank line; a section whose text starts with "No" counts nothing;
sub-category counts are read from lines starting "(a) ... : N." (or "(1)".."(6)"), the last such line winning;
the matched count from the first line of the section that starts with "N." (RadEval looks at every line;
green_score 0.0.12 only at the first). Where the reference silently counts a missing section as 0 (so an
unreadable response scores 0), this parser (strict=True, the default) reports the response as unparsed so
callers can count it; strict=False reproduces RadEval exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...text.sentences import statements

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
    """The GREEN instruction with both reports filled in, character for character as Stanford-AIMI/GREEN's
    `make_prompt` writes it (radeval 2.2.1 `green_score/utils.py`): every line after the first indented by 4
    spaces, the criteria (a)-(f) of appendix A.1 without a blank line before "Note:". Reports are inserted as
    given; `generation.truncate_words` cuts them to 300 words first, as the reference does."""
    criteria = "\n    ".join(f"{letter}) {text}." for letter, text in CATEGORIES.items())
    lines = [
        (
            "Objective: Evaluate the accuracy of a candidate radiology report in comparison to a reference radiology "
            "report composed by expert radiologists."
        ),
        None,
        "Process Overview: You will be presented with:",
        None,
        "1. The criteria for making a judgment.",
        "2. The reference radiology report.",
        "3. The candidate radiology report.",
        "4. The desired format for your assessment.",
        None,
        "1. Criteria for Judgment:",
        None,
        "For each candidate report, determine:",
        None,
        "The count of clinically significant errors.",
        "The count of clinically insignificant errors.",
        None,
        "Errors can fall into one of these categories:",
        None,
        criteria,
        (
            "Note: Concentrate on the clinical findings rather than the report's writing style. "
            "Evaluate only the findings that appear in both reports."
        ),
        None,
        "2. Reference Report:",
        reference,
        None,
        "3. Candidate Report:",
        candidate,
        None,
        "4. Reporting Your Assessment:",
        None,
        "Follow this specific format for your output, even if no errors are found:",
        "```",
        "[Explanation]:",
        "<Explanation>",
        None,
        "[Clinically Significant Errors]:",
        "(a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>",
        "....",
        "(f) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>",
        None,
        "[Clinically Insignificant Errors]:",
        "(a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>",
        "....",
        "(f) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>",
        None,
        "[Matched Findings]:",
        "<The number of matched findings>. <Finding 1>; <Finding 2>; ...; <Finding n>",
        "```",
    ]
    return lines[0] + "".join("\n" if line is None else f"\n    {line}" for line in lines[1:]) + "\n"


def short_prompt(reference: str, candidate: str) -> str:
    """A short instruction for models fine-tuned on GREEN responses (radmetrics' `prompt: short` exports): the two
    reports and one line naming the task, without appendix A.1's criteria and format (about 400 of SmolLM2's tokens
    fewer per pair; the response format, and so the parser, are unchanged). Not what released GREEN models were
    trained on: an export records the prompt it was trained with, and scoring uses that one."""
    return (
        "Compare the candidate radiology report with the reference report and list its clinically significant "
        f"and insignificant errors and the matched findings in GREEN's format.\nReference report: {reference}\n"
        f"Candidate report: {candidate}\n"
    )


def numbered_prompt(reference: str, candidate: str) -> str:
    """The short instruction with each report's statements numbered (R1, R2, ... and C1, C2, ...) as the semantic
    teacher numbers them, so that a model distilled from it can name each decision as the teacher's walkthrough does
    ("C1 matches R2. C2 (a) significant: ...") instead of counting sentences itself."""

    def numbered(report: str, side: str) -> str:
        return "\n".join(f"{side}{i}: {s}." for i, s in enumerate(statements(report), 1)) or "(empty)"

    return (
        "Compare the candidate radiology report with the reference report statement by statement and list its "
        "clinically significant and insignificant errors and the matched findings in GREEN's format.\n"
        f"Reference report:\n{numbered(reference, 'R')}\nCandidate report:\n{numbered(candidate, 'C')}\n"
    )


def findings_prompt(reference: str, candidate: str) -> str:
    """The short instruction with each report's findings numbered (R1, R2, ... and C1, C2, ...) as the findings
    extractor lists them and the semantic teacher judges them (`semantic_green`, findings first). Each report arrives
    as its findings, one per line (`findings_text`): a model prompted this way needs the extractor run first, which
    training records carry and scoring does (the GREEN metric, for an export trained with it)."""

    def numbered(findings: str, side: str) -> str:
        items = [item for item in findings.split("\n") if item.strip()]
        return "\n".join(f"{side}{i}: {item}" for i, item in enumerate(items, 1)) or "(no findings)"

    return (
        "Compare the candidate radiology report's findings with the reference report's, finding by finding, and list "
        "its clinically significant and insignificant errors and the matched findings in GREEN's format.\n"
        f"Reference findings:\n{numbered(reference, 'R')}\nCandidate findings:\n{numbered(candidate, 'C')}\n"
    )


def findings_text(findings: list[str]) -> str:
    """A report's findings as the `findings` prompt reads them: one per line."""
    return "\n".join(" ".join(item.split()) for item in findings)


PROMPTS = {"green": green_prompt, "short": short_prompt, "numbered": numbered_prompt, "findings": findings_prompt}
NEEDS_FINDINGS = ("findings",)  # prompts whose reports are findings lists (findings_text), extracted first


def prompt_reports(record, prompt: str) -> tuple[str, str]:
    """The two texts `prompt` reads for an annotation record: its reports, or, for the `findings` prompt, the findings
    lists the semantic teacher judged (`reference_findings`, `candidate_findings`)."""
    if prompt not in NEEDS_FINDINGS:
        return record["reference"], record["candidate"]
    if "reference_findings" not in record:
        raise ValueError(
            "the findings prompt reads the findings the semantic teacher judged, which these records lack: build them "
            "with `radmetrics data pairs --teacher semantic --units findings` (or data annotate --units findings)"
        )
    return findings_text(record["reference_findings"]), findings_text(record["candidate_findings"])


def _strip_period(text: str) -> str:
    return " ".join(text.split()).rstrip(". ;")


def render_green_response(
    explanation: str, significant: dict[str, list[str]], insignificant: dict[str, list[str]], matched: list[str]
) -> str:
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
    return (
        f"[{EXPLANATION}]:\n{' '.join(explanation.split())}\n\n[{SIGNIFICANT}]:\n{section(significant)}\n\n"
        f"[{INSIGNIFICANT}]:\n{section(insignificant)}\n\n[{MATCHED}]:\n{matched_line}"
    )


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
    counted = {title: body for title, body in bodies.items() if body is not None and not body.startswith("No")}
    sig = _category_counts(counted[SIGNIFICANT]) if SIGNIFICANT in counted else (0,) * 6
    insig = _category_counts(counted[INSIGNIFICANT]) if INSIGNIFICANT in counted else (0,) * 6
    matched = 0
    if MATCHED in counted:
        found = re.findall(r"^\b\d+\b(?=\.)", counted[MATCHED], re.MULTILINE)
        if found:
            matched = int(found[0])
        else:
            problems.append(f"[{MATCHED}] gives no count")
    for title in (SIGNIFICANT, INSIGNIFICANT):
        if title in counted and not re.search(r"\(([a-f]|[1-6])\) ", counted[title]):
            problems.append(f"[{title}] lists no categories")
    return GreenParse(sig, insig, matched, not problems if strict else True, problems)
