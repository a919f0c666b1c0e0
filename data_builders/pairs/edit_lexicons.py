"""Small lexicons that let the pair builders edit findings and know what they changed.

These drive the RadGraph-style permutations of GREEN section 3.1.1 (presence, location, severity/size,
inserted and deleted findings, comparisons). They are deliberately simple word rules: every edit they
make is logged, so the labels derived from the log are exact even where the rule is crude. What is normal and what is
a comparison with a prior study is the semantic_green metric's rule (`inference/text/word_rules.py`), so that the
programmatic teacher that trains students and the metric that scores them agree on it.
"""

from __future__ import annotations

import re

from radmetrics.inference.text.word_rules import is_comparison, is_normal

CHANGE_WORDS = re.compile(r"\b(increased|decreased|improved|worsened|new|enlarging|progress\w*|resolv\w*)\b", re.I)
LATERALITY = {
    "left": "right",
    "right": "left",
    "bilateral": "left",
    "upper": "lower",
    "lower": "upper",
    "apical": "basilar",
    "basilar": "apical",
    "medial": "lateral",
    "lateral": "medial",
}
SEVERITY_LADDER = ["minimal", "mild", "moderate", "severe"]
SIZE_LADDER = ["tiny", "small", "moderate", "large"]
NEGATED_START = re.compile(r"^(there is |there are )?no (evidence of )?(an? )?", re.I)
COMPARISON_SENTENCES = [
    "Compared to the prior study, there is no significant interval change.",
    "Findings are unchanged from the previous examination.",
    "Stable appearance since the prior radiograph.",
]


def is_abnormal_finding(sentence: str) -> bool:
    return not is_normal(sentence) and not is_comparison(sentence) and len(sentence.split()) >= 2


def _replace_word(sentence: str, mapping: dict[str, str]) -> tuple[str, str, str] | None:
    for match in re.finditer(r"\b[A-Za-z]+\b", sentence):
        word = match.group(0)
        target = mapping.get(word.lower())
        if target:
            new = target.capitalize() if word[0].isupper() else target
            return sentence[: match.start()] + new + sentence[match.end() :], word, new
    return None


def change_laterality(sentence: str):
    return _replace_word(sentence, LATERALITY)


def change_severity(sentence: str):
    """Move a severity or size word one step up or down its ladder, or change a measurement."""
    for ladder in (SEVERITY_LADDER, SIZE_LADDER):
        mapping = {w: ladder[i + 1] if i + 1 < len(ladder) else ladder[i - 1] for i, w in enumerate(ladder)}
        found = _replace_word(sentence, mapping)
        if found:
            return found
    measure = re.search(r"\b(\d+(?:\.\d+)?)\s*(cm|mm)\b", sentence)
    if measure:
        value = float(measure.group(1))
        new_value = f"{value * 2:g}"
        new = f"{new_value} {measure.group(2)}"
        return sentence[: measure.start()] + new + sentence[measure.end() :], measure.group(0), new
    return None


def negate(sentence: str) -> str | None:
    """Abnormal finding -> its absence ("Small left effusion." -> "No small left effusion.")."""
    if not is_abnormal_finding(sentence):
        return None
    body = sentence.rstrip(".").strip()
    body = re.sub(r"^(there is|there are|there has been)\s+(an?\s+)?", "", body, flags=re.I)
    return f"No {body[0].lower()}{body[1:]}."


def affirm(sentence: str) -> str | None:
    """Negated finding -> its presence ("No pleural effusion." -> "Pleural effusion is present.")."""
    match = NEGATED_START.match(sentence.strip())
    if not match:
        return None
    body = sentence.strip()[match.end() :].rstrip(".").strip()
    if not body or len(body.split()) > 8 or re.search(r"\b(or|and|nor)\b", body):
        return None
    return f"{body[0].upper()}{body[1:]} is present."
