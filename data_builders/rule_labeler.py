"""CheXpert-style rule labeler (silver labels for the CheXbert-style recipe).

Mentions come from the chexpert-labeler phrase lists (bundled). Instead of the BLLIP parser and
NegBio's dependency patterns, negation and uncertainty are found with cue lists and a clause scope:
a pre-cue ("no", "without", "may reflect") governs mentions after it in its clause, a post-cue
("is not seen", "cannot be excluded", "normal") mentions before it. Per report, positive beats
uncertain beats negative, as in CheXpert's aggregation; No Finding is 1 when no other observation
(except Support Devices) and no "other finding" phrase is positive or uncertain.
Output per observation: 1 positive, 0 negative, -1 uncertain, None not mentioned.
"""

from __future__ import annotations

import re
from functools import lru_cache

from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
from radmetrics.inference.sentences import split_sentences

from .corpora import bundled_path

PRE_NEGATION = ["no", "not", "without", "negative for", "free of", "absence of", "no evidence of", "no signs of",
                "resolution of", "resolved", "clear of", "rather than", "removal of", "interval removal of", "no new",
                "normal", "unremarkable", "negative"]
POST_NEGATION = ["is not seen", "are not seen", "not seen", "not identified", "not present", "is absent", "are absent",
                 "has resolved", "have resolved", "resolved", "is normal", "are normal", "normal", "within normal limits",
                 "unremarkable", "not enlarged", "is clear", "are clear", "removed"]
PRE_UNCERTAINTY = ["may", "might", "possible", "possibly", "probable", "probably", "likely", "suggest", "suggests",
                   "suggestive of", "concerning for", "concern for", "question of", "questionable", "suspicious for",
                   "worrisome for", "could", "versus", "vs", "differential", "borderline", "cannot exclude",
                   "can not exclude", "cannot rule out", "not excluded", "compatible with", "equivocal", "suspected"]
POST_UNCERTAINTY = ["cannot be excluded", "can not be excluded", "not excluded", "cannot be ruled out", "is possible",
                    "are possible", "is suspected", "not ruled out", "could be", "may be present", "is questioned"]
CLAUSE_BREAK = re.compile(r";|\bbut\b|\bhowever\b|\balthough\b|\bexcept\b|\bwhich\b|\bwith\b")
OTHER_FINDING = "No Finding"  # the no_finding.txt phrases name "other findings" that block No Finding


def _phrase_pattern(phrases: list[str]) -> re.Pattern | None:
    if not phrases:
        return None
    parts = [re.escape(p.lower()).replace("_", r"\b") for p in phrases if p.strip()]
    return re.compile("|".join(f"(?:{p})" for p in sorted(parts, key=len, reverse=True)))


@lru_cache(maxsize=1)
def lexicon() -> dict[str, tuple[re.Pattern | None, re.Pattern | None]]:
    root = bundled_path("chexpert_labeler", "phrases")
    table = {}
    for name in CHEXPERT_CONDITIONS:
        stem = name.lower().replace(" ", "_")
        mention = (root / "mention" / f"{stem}.txt").read_text(encoding="utf-8").splitlines()
        unmention_path = root / "unmention" / f"{stem}.txt"
        unmention = unmention_path.read_text(encoding="utf-8").splitlines() if unmention_path.is_file() else []
        table[name] = (_phrase_pattern(mention), _phrase_pattern(unmention))
    return table


def _cue_regex(cues: list[str]) -> re.Pattern:
    return re.compile("|".join(rf"\b{re.escape(c)}\b" for c in sorted(cues, key=len, reverse=True)))


_PRE_NEG, _POST_NEG = _cue_regex(PRE_NEGATION), _cue_regex(POST_NEGATION)
_PRE_UNC, _POST_UNC = _cue_regex(PRE_UNCERTAINTY), _cue_regex(POST_UNCERTAINTY)


def _clause(sentence: str, start: int, end: int) -> tuple[str, str]:
    """Text of the mention's clause before and after the mention."""
    before, after = sentence[:start], sentence[end:]
    breaks = list(CLAUSE_BREAK.finditer(before))
    if breaks:
        before = before[breaks[-1].end():]
    nxt = CLAUSE_BREAK.search(after)
    if nxt:
        after = after[: nxt.start()]
    return before, after


def classify_mention(sentence: str, start: int, end: int) -> int:
    before, after = _clause(sentence, start, end)
    if _PRE_UNC.search(before) and re.search(r"\b(cannot|can not|not) (exclude|rule out)", before):
        return -1
    if _PRE_NEG.search(before) or _POST_NEG.search(after):
        return 0
    if _PRE_UNC.search(before) or _POST_UNC.search(after):
        return -1
    return 1


def _mentions(sentence: str, pattern: re.Pattern | None, unmention: re.Pattern | None):
    if pattern is None:
        return
    blocked = [m.span() for m in unmention.finditer(sentence)] if unmention else []
    for m in pattern.finditer(sentence):
        if not any(s <= m.start() < e for s, e in blocked):
            yield m.start(), m.end()


def label_report(text: str) -> dict[str, int | None]:
    sentences = [" " + s.lower().rstrip(".") + " " for s in split_sentences(text)]
    labels: dict[str, int | None] = {}
    for name, (pattern, unmention) in lexicon().items():
        found = [classify_mention(s, a, b) for s in sentences for a, b in _mentions(s, pattern, unmention)]
        if name == OTHER_FINDING:
            labels[name] = found  # resolved below
            continue
        labels[name] = 1 if 1 in found else -1 if -1 in found else 0 if found else None
    other = labels.pop(OTHER_FINDING)
    blocking = [v for k, v in labels.items() if k != "Support Devices"] + list(other)
    labels[OTHER_FINDING] = None if any(v in (1, -1) for v in blocking) else 1
    return {name: labels[name] for name in CHEXPERT_CONDITIONS}
