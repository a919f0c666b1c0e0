"""Negation and uncertainty of a mention by cue lists and a clause scope (instead of the BLLIP parser and NegBio's
dependency patterns): a pre-cue ("no", "without", "may reflect") governs mentions after it in its clause, a post-cue
("is not seen", "cannot be excluded", "normal") mentions before it.

Shared by the CheXpert-style rule labeler and the entity lexicon (data_builders) and the semantic GREEN teacher.
"""

from __future__ import annotations

import re

# The plainest negation cues; the semantic GREEN teacher's normal-statement cues start with them too.
BASIC_NEGATIONS = ("no", "not", "without", "negative for", "free of", "absence of")
PRE_NEGATION = [
    *BASIC_NEGATIONS,
    "no evidence of",
    "no signs of",
    "resolution of",
    "resolved",
    "clear of",
    "rather than",
    "removal of",
    "interval removal of",
    "no new",
    "normal",
    "unremarkable",
    "negative",
]
POST_NEGATION = [
    "is not seen",
    "are not seen",
    "not seen",
    "not identified",
    "not present",
    "is absent",
    "are absent",
    "has resolved",
    "have resolved",
    "resolved",
    "is normal",
    "are normal",
    "normal",
    "within normal limits",
    "unremarkable",
    "not enlarged",
    "is clear",
    "are clear",
    "removed",
]
PRE_UNCERTAINTY = [
    "may",
    "might",
    "possible",
    "possibly",
    "probable",
    "probably",
    "likely",
    "suggest",
    "suggests",
    "suggestive of",
    "concerning for",
    "concern for",
    "question of",
    "questionable",
    "suspicious for",
    "worrisome for",
    "could",
    "versus",
    "vs",
    "differential",
    "borderline",
    "cannot exclude",
    "can not exclude",
    "cannot rule out",
    "not excluded",
    "compatible with",
    "equivocal",
    "suspected",
]
POST_UNCERTAINTY = [
    "cannot be excluded",
    "can not be excluded",
    "not excluded",
    "cannot be ruled out",
    "is possible",
    "are possible",
    "is suspected",
    "not ruled out",
    "could be",
    "may be present",
    "is questioned",
]
CLAUSE_BREAK = re.compile(r";|\bbut\b|\bhowever\b|\balthough\b|\bexcept\b|\bwhich\b|\bwith\b")


def _cue_regex(cues: list[str]) -> re.Pattern:
    return re.compile("|".join(rf"\b{re.escape(c)}\b" for c in sorted(cues, key=len, reverse=True)))


_PRE_NEG, _POST_NEG = _cue_regex(PRE_NEGATION), _cue_regex(POST_NEGATION)
_PRE_UNC, _POST_UNC = _cue_regex(PRE_UNCERTAINTY), _cue_regex(POST_UNCERTAINTY)


def _clause(sentence: str, start: int, end: int) -> tuple[str, str]:
    """Text of the mention's clause before and after the mention."""
    before, after = sentence[:start], sentence[end:]
    breaks = list(CLAUSE_BREAK.finditer(before))
    if breaks:
        before = before[breaks[-1].end() :]
    nxt = CLAUSE_BREAK.search(after)
    if nxt:
        after = after[: nxt.start()]
    return before, after


def classify_mention(sentence: str, start: int, end: int) -> int:
    """1 present, 0 negated, -1 uncertain: the mention at sentence[start:end], in its clause."""
    before, after = _clause(sentence, start, end)
    if _PRE_UNC.search(before) and re.search(r"\b(cannot|can not|not) (exclude|rule out)", before):
        return -1
    if _PRE_NEG.search(before) or _POST_NEG.search(after):
        return 0
    if _PRE_UNC.search(before) or _POST_UNC.search(after):
        return -1
    return 1
