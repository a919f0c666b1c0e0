"""CheXpert-style rule labeler (silver labels for the CheXbert-style recipe).

Mentions come from the chexpert-labeler phrase lists (bundled). Instead of the BLLIP parser and
NegBio's dependency patterns, negation and uncertainty are found with cue lists and a clause scope
(`inference/text/negation.py`, shared with the entity lexicon and the semantic GREEN teacher). Per report, positive
beats uncertain beats negative, as in CheXpert's aggregation; No Finding is 1 when no other observation
(except Support Devices) and no "other finding" phrase is positive or uncertain.
Output per observation: 1 positive, 0 negative, -1 uncertain, None not mentioned.
"""

from __future__ import annotations

import re
from functools import lru_cache

from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
from radmetrics.inference.text.negation import classify_mention
from radmetrics.inference.text.sentences import split_sentences

from ..corpus.corpora import bundled_path

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
