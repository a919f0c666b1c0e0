"""Meaning-preserving rewrites of one finding: each gives a candidate the judge should call `same`.

Each rewrite returns `(candidate, kind)` or None when it does not apply. They change wording only: a synonym or an
abbreviation, another sentence frame, another unit, a measurement within the tolerance a radiologist accepts
(measurement.py decides it), never a finding's attribute.
"""

from __future__ import annotations

import random
import re

from .measurement import tolerated_percent, within_tolerance

# Synonyms a radiologist reads as the same finding (both directions).
SYNONYMS = (
    ("cardiomegaly", "enlargement of the cardiac silhouette"),
    ("enlarged heart", "cardiomegaly"),
    ("opacity", "opacification"),
    ("pulmonary nodule", "lung nodule"),
    ("pulmonary edema", "pulmonary oedema"),
    ("lungs are clear", "lungs are without focal consolidation"),
    ("pneumothorax", "pneumothoraces"),
    ("pleural effusion", "pleural fluid collection"),
    ("is seen", "is noted"),
    ("is noted", "is identified"),
    ("are seen", "are noted"),
    ("is present", "is seen"),
    ("there is", "there is evidence of"),
    ("consolidation", "airspace consolidation"),
    ("hyperinflated", "hyperexpanded"),
    ("atelectasis", "atelectatic change"),
    ("degenerative changes", "degenerative change"),
    ("granuloma", "calcified granuloma"),
    ("midline", "in the midline"),
    ("moderate", "moderate-sized"),
    ("moderate", "moderately sized"),
    ("small", "small-sized"),
    ("large", "large-sized"),
    ("terminates", "ends"),
    ("terminates", "has its tip"),
    ("tip is", "tip projects"),
    ("above the carina", "proximal to the carina"),
    ("cm above", "cm superior to"),
    ("lobe", "lobe of the lung"),
    ("effusion", "pleural effusion"),
    ("opacity", "airspace opacity"),
)
# Abbreviations radiologists write (the inverse of inference/text/sentences.py's expansions, and a few more).
ABBREVIATIONS = (
    ("endotracheal tube", "ETT"),
    ("nasogastric tube", "NG tube"),
    ("pneumothorax", "PTX"),
    ("right lower lobe", "RLL"),
    ("right upper lobe", "RUL"),
    ("right middle lobe", "RML"),
    ("left lower lobe", "LLL"),
    ("left upper lobe", "LUL"),
    ("peripherally inserted central catheter", "PICC"),
    ("superior vena cava", "SVC"),
    ("bilateral", "b/l"),
)
_THERE_IS = re.compile(r"^there (is|are) (an? )?(?P<body>.+?)\.?$", re.I)
_IS_SEEN = re.compile(r"^(?P<body>.+?) (?P<verb>is|are) (seen|noted|present|identified)\.?$", re.I)


def _swap_phrase(sentence: str, pairs, rng: random.Random) -> str | None:
    options = []
    for a, b in pairs:
        for old, new in ((a, b), (b, a)):
            if re.search(rf"(?<![\w/]){re.escape(old)}(?![\w/])", sentence, re.I):
                options.append((old, new))
    if not options:
        return None
    old, new = rng.choice(options)
    pattern = re.compile(rf"(?<![\w/]){re.escape(old)}(?![\w/])", re.I)

    def keep_case(match: re.Match) -> str:
        return new[0].upper() + new[1:] if match.group(0)[0].isupper() and not new.isupper() else new

    return pattern.sub(keep_case, sentence, count=1)


def synonym(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    found = _swap_phrase(sentence, SYNONYMS, rng)
    return (found, "synonym") if found else None


def abbreviation(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    found = _swap_phrase(sentence, ABBREVIATIONS, rng)
    return (found, "abbreviation") if found else None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def reframe(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """ "There is a small effusion." <-> "A small effusion is seen."; other findings are given a frame."""
    text = sentence.strip()
    there = _THERE_IS.match(text)
    if there:
        body = there.group("body")
        verb = "are" if there.group(1).lower() == "are" else "is"
        return f"{_capital(body)} {verb} {rng.choice(('seen', 'noted', 'present'))}.", "reframe"
    seen = _IS_SEEN.match(text)
    if seen:
        body = seen.group("body")
        return f"There {seen.group('verb').lower()} {body[:1].lower()}{body[1:]}.", "reframe"
    if len(text.split()) <= 8 and not re.search(r"\b(no|not|without|is|are|was|were)\b", text, re.I):
        body = text.rstrip(".")
        return f"{_capital(body)} is {rng.choice(('seen', 'noted', 'present'))}.", "reframe"
    return None


def reorder(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """ "Opacity in the right lower lobe." <-> "Right lower lobe opacity."; "8 mm nodule in the right lower lobe." ->
    "Right lower lobe nodule measuring 8 mm"."""
    text = sentence.strip().rstrip(".")
    sized = re.match(
        r"^(?P<size>\d+(?:\.\d+)? ?(?:mm|cm)) (?P<what>[a-z ]{3,30}?) in the (?P<where>[a-z ]{3,40})$", text, re.I
    )
    if sized:
        return f"{_capital(sized.group('where'))} {sized.group('what')} measuring {sized.group('size')}.", "reorder"
    found = re.match(
        r"^(?P<what>[A-Za-z ]{3,40}?) (in|within|at) the (?P<where>(right|left|bilateral)[a-z ]{3,30})$", text
    )
    if found:
        return f"{_capital(found.group('where'))} {found.group('what').lower()}.", "reorder"
    found = re.match(r"^(?P<where>(right|left) (upper|middle|lower) lobe) (?P<what>[a-z ]{3,30})$", text, re.I)
    if found:
        return f"{_capital(found.group('what'))} in the {found.group('where').lower()}.", "reorder"
    return None


_NUMBER_UNIT = re.compile(r"\b(\d+(?:\.\d+)?)\s*(cm|mm)\b")


def change_unit(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """ "8 mm" <-> "0.8 cm"."""
    found = _NUMBER_UNIT.search(sentence)
    if not found:
        return None
    value, unit = float(found.group(1)), found.group(2)
    new = f"{value / 10:g} cm" if unit == "mm" else f"{value * 10:g} mm"
    return sentence[: found.start()] + new + sentence[found.end() :], "unit"


def tolerated_measurement(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A size a little different, within the tolerance a radiologist accepts (measurement.py)."""
    found = _NUMBER_UNIT.search(sentence)
    if not found:
        return None
    value, unit = float(found.group(1)), found.group(2)
    step = 1.0 if unit == "mm" else 0.1
    for new_value in (value + step, value - step):
        if new_value > 0 and within_tolerance(value, new_value, unit):
            text = f"{round(new_value, 1):g} {unit}"
            return sentence[: found.start()] + text + sentence[found.end() :], "measurement_within_tolerance"
    return None


_PERCENT_WORD = re.compile(r"(\d)\s*(%|percent\b)")


def percent_form(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A ratio or percentage a point or two different, or written another way ("20%" <-> "20 percent", a ratio as a
    percentage): the same reading (measurement.py)."""
    found = _PERCENT_WORD.search(sentence)
    if found and rng.random() < 0.3:
        word = " percent" if found.group(2) == "%" else "%"
        return sentence[: found.start(2)].rstrip() + word + sentence[found.end(2) :], "percent_form"
    text = tolerated_percent(sentence, rng)
    return (text, "percent_within_tolerance") if text else None


REWRITES = (synonym, abbreviation, reframe, reorder, change_unit, tolerated_measurement, percent_form)


def rewrite_once(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    options = list(REWRITES)
    rng.shuffle(options)
    for function in options:
        found = function(sentence, rng)
        if found and found[0].strip().lower() != sentence.strip().lower():
            return found
    return None


def rewrite(sentence: str, rng: random.Random, most: int = 3) -> tuple[str, str] | None:
    """A meaning-preserving rewrite of `sentence` that changes its text (one to `most` rewrites in a row, their kinds
    joined by "+"), or None."""
    found = rewrite_once(sentence, rng)
    if found is None:
        return None
    text, kinds = found[0], [found[1]]
    for _ in range(rng.randint(0, most - 1)):
        again = rewrite_once(text, rng)
        if again is None:
            break
        text, kinds = again[0], kinds + [again[1]]
    return text, "+".join(kinds)
