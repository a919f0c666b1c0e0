"""Sizes and device tip positions: the tolerance a radiologist accepts, and edits beyond it.

Sizes. Two readers measuring the same nodule or mass differ by about 1-2 mm (interobserver variation on CT is of that
order, and on a radiograph larger): a difference of at most 2 mm, or of at most 20% of the size, is the same
measurement. Up to half the size again (20-50%) is an insignificant measurement error; a change of 50% or more (an
8 mm nodule called 18 mm, a size that doubles or halves) is significant: it changes a nodule's follow-up category.

Ratios and percentages. A cardiothoracic ratio read twice differs by a few hundredths, and a pneumothorax's share of
the hemithorax is an estimate: a difference of at most 3 percentage points is the same reading. 10 points or more is
significant (a cardiothoracic ratio of 0.45 called 0.60 makes a normal heart enlarged, past the 0.5 that defines
cardiomegaly on a PA film; a 10% pneumothorax called 30% changes whether it is drained), and so is a change across 50%
(0.48 against 0.55: a normal heart against an enlarged one); in between is insignificant.

Device tips. An endotracheal tube tip sits 3-7 cm above the carina; nearer than 2 cm, at or below the carina, or in a
mainstem bronchus is malpositioned; a central line's tip belongs in the lower superior vena cava or at the cavoatrial
junction, not deep in the right atrium or in a neck or arm vein; a gastric tube's tip in the stomach, not in the
oesophagus. A position change that moves a tip in or out of its place is significant; a change of at most 1 cm within
it is the same position; a larger change within it is an insignificant error.
"""

from __future__ import annotations

import random
import re

from radmetrics.inference.findings.pair_features import HALF, PERCENT, RATIO

SIZE_TOLERANCE_MM = 2.0
SIZE_TOLERANCE_RATIO = 0.2
SIGNIFICANT_SIZE_RATIO = 0.5
_NUMBER_UNIT = re.compile(r"\b(\d+(?:\.\d+)?)\s*(cm|mm)\b")
_LANDMARK_AFTER = re.compile(r"\s+(?:above|below|from|superior to|inferior to|proximal to|distal to)\b", re.I)


def _mm(value: float, unit: str) -> float:
    return value * 10 if unit == "cm" else value


def size_change(before_mm: float, after_mm: float) -> str:
    """`same`, `insignificant` or `significant`: how a radiologist reads a size reported as `after` instead of
    `before`."""
    difference = abs(after_mm - before_mm)
    relative = difference / max(before_mm, 1e-9)
    if difference <= SIZE_TOLERANCE_MM or relative <= SIZE_TOLERANCE_RATIO:
        return "same"
    return "significant" if relative >= SIGNIFICANT_SIZE_RATIO else "insignificant"


def within_tolerance(before: float, after: float, unit: str) -> bool:
    return size_change(_mm(before, unit), _mm(after, unit)) == "same"


def change_measurement(sentence: str, rng: random.Random) -> tuple[str, bool] | None:
    """The sentence with its first size changed beyond tolerance, and whether that is significant. A distance from a
    landmark ("4 cm above the carina") is a device tip's position, not a size: device_position_pair edits those."""
    found = next((m for m in _NUMBER_UNIT.finditer(sentence) if not _LANDMARK_AFTER.match(sentence, m.end())), None)
    if not found:
        return None
    value, unit = float(found.group(1)), found.group(2)
    before = _mm(value, unit)
    factor = rng.choice((0.3, 0.5, 1.35, 1.4, 2.0, 2.25, 3.0, 0.7))
    new_value = round(value * factor, 1 if unit == "cm" else 0)
    if new_value <= 0:
        return None
    verdict = size_change(before, _mm(new_value, unit))
    if verdict == "same":
        return None
    new = f"{new_value:g} {unit}"
    return sentence[: found.start()] + new + sentence[found.end() :], verdict == "significant"


SAME_PERCENT_POINTS = 3.0
SIGNIFICANT_PERCENT_POINTS = 10.0
_PERCENT_OR_RATIO = re.compile(f"{PERCENT}|{RATIO}", re.I)


def percent_change(before: float, after: float) -> str:
    """`same`, `insignificant` or `significant`: a ratio or percentage (in percent) reported as `after`."""
    difference = abs(after - before)
    if difference <= SAME_PERCENT_POINTS:
        return "same"
    crosses = (before > HALF) != (after > HALF)
    return "significant" if difference >= SIGNIFICANT_PERCENT_POINTS or crosses else "insignificant"


def _percent_span(sentence: str) -> tuple[re.Match, float, bool] | None:
    """The first ratio or percentage: (its match, its value in percent, whether it is written as a ratio)."""
    found = _PERCENT_OR_RATIO.search(sentence)
    if not found:
        return None
    ratio = found.group(1) is None
    value = float(found.group(2)) * 100 if ratio else float(found.group(1))
    return (found, value, ratio) if (not ratio or value < 150) else None


def written_percent(sentence: str, found: re.Match, ratio: bool, percent: float) -> str:
    """The sentence with the number of `found` written as `percent` (a ratio with two decimals)."""
    group = 2 if ratio else 1
    number = f"{percent / 100:.2f}" if ratio else f"{round(percent):g}"
    return sentence[: found.start(group)] + number + sentence[found.end(group) :]


def change_percent(sentence: str, rng: random.Random) -> tuple[str, bool] | None:
    """The sentence with its first ratio or percentage changed beyond tolerance, and whether that is significant."""
    found = _percent_span(sentence)
    if found is None:
        return None
    match, value, ratio = found
    new = value + rng.choice((-25, -15, -10, -7, -5, 5, 7, 10, 15, 25))
    low, high = (30, 85) if ratio else (1, 95)  # a cardiothoracic ratio from 0.30 to 0.85
    if not low <= new <= high or percent_change(value, new) == "same":
        return None
    return written_percent(sentence, match, ratio, new), percent_change(value, new) == "significant"


def tolerated_percent(sentence: str, rng: random.Random) -> str | None:
    """The sentence with its first ratio or percentage a point or two different, or a ratio written as a percentage."""
    found = _percent_span(sentence)
    if found is None:
        return None
    match, value, ratio = found
    if ratio and rng.random() < 0.5:  # "ratio of 0.55" -> "ratio of 55%"
        return sentence[: match.start(2)] + f"{round(value):g}%" + sentence[match.end(2) :]
    return written_percent(sentence, match, ratio, value + rng.choice((-2, -1, 1, 2)))


# Synthetic findings with sizes: the bundled corpus has few (about 160 of 8,300 statements).
LESIONS = ("nodule", "mass", "pulmonary nodule", "nodular opacity", "cavitary lesion", "granuloma", "lymph node")
PLACES = (
    "right upper lobe",
    "right middle lobe",
    "right lower lobe",
    "left upper lobe",
    "left lower lobe",
    "lingula",
    "right lung base",
    "left lung apex",
    "right perihilar region",
    "left midlung zone",
)
SIZE_FRAMES = (
    "{size} {lesion} in the {place}.",
    "There is a {size} {lesion} in the {place}.",
    "A {lesion} in the {place} measures {size}.",
    "{place_cap} {lesion} measuring {size}.",
)


def synthetic_size_findings(rng: random.Random, count: int) -> list[str]:
    found = []
    for _ in range(count):
        unit = rng.choice(("mm", "cm"))
        value = (
            rng.choice((3, 4, 5, 6, 8, 10, 12, 15, 20)) if unit == "mm" else rng.choice((1.2, 1.5, 2, 2.5, 3, 4, 5))
        )
        place = rng.choice(PLACES)
        frame = rng.choice(SIZE_FRAMES)
        text = frame.format(
            size=f"{value:g} {unit}", lesion=rng.choice(LESIONS), place=place, place_cap=place.capitalize()
        )
        found.append(text[0].upper() + text[1:])
    return found


RATIO_FRAMES = (
    "Cardiothoracic ratio of {r}.",
    "The cardiothoracic ratio is {r}.",
    "CTR {r}.",
    "Heart size: cardiothoracic ratio approximately {r}.",
    "Cardiothoracic ratio measures {r}.",
)
PERCENT_FRAMES = (
    "{Side} pneumothorax, approximately {p} of the hemithorax.",
    "{Side} apical pneumothorax, estimated at {p}.",
    "There is a {p} {side} pneumothorax.",
    "{Side} pleural effusion occupying about {p} of the hemithorax.",
    "{Side} pneumothorax of approximately {p} by volume.",
)


def synthetic_percent_findings(rng: random.Random, count: int) -> list[str]:
    """Cardiothoracic ratios and pneumothoraces or effusions sized by percentage (the corpus has almost none)."""
    found = []
    for _ in range(count):
        if rng.random() < 0.5:
            ratio = rng.choice((0.38, 0.42, 0.45, 0.48, 0.5, 0.52, 0.55, 0.58, 0.6, 0.65, 0.7))
            found.append(rng.choice(RATIO_FRAMES).format(r=f"{ratio:.2f}"))
            continue
        side = rng.choice(("right", "left"))
        percent = rng.choice((5, 10, 15, 20, 25, 30, 40, 50, 60))
        written = f"{percent}%" if rng.random() < 0.7 else f"{percent} percent"
        text = rng.choice(PERCENT_FRAMES).format(p=written, side=side, Side=side.capitalize())
        found.append(text[0].upper() + text[1:])
    return found


# Device tips: (device, acceptable landmarks, malpositioned landmarks), after the positions in Godoy et al., "Chest
# radiography in the ICU" (AJR 2012).
DEVICES = {
    "endotracheal tube": (
        ("in the mid trachea", "at the level of the clavicular heads", "between the clavicular heads and the carina"),
        (
            "in the right mainstem bronchus",
            "in the left mainstem bronchus",
            "in the oesophagus",
            "at the carina",
            "at the level of the thoracic inlet",
            "in the bronchus intermedius",
        ),
    ),
    "right internal jugular central venous catheter": (
        ("in the lower superior vena cava", "at the cavoatrial junction", "at the SVC/RA junction"),
        ("in the right atrium", "in the right subclavian vein", "in the internal jugular vein", "in the azygos vein"),
    ),
    "left-sided PICC line": (
        ("in the distal superior vena cava", "at the cavo-atrial junction"),
        (
            "in the right atrium",
            "in the left subclavian vein",
            "in the left axillary vein",
            "in the left innominate vein",
        ),
    ),
    "left internal jugular central line": (
        ("in the superior vena cava", "at the cavoatrial junction"),
        ("in the left brachiocephalic vein", "in the right atrium", "in the left internal jugular vein"),
    ),
    "right subclavian catheter": (
        ("in the mid superior vena cava", "at the junction of the superior vena cava and right atrium"),
        ("in the right internal jugular vein", "in the right ventricle", "in the right atrium"),
    ),
    "feeding tube": (
        ("in the stomach", "in the duodenum", "below the left hemidiaphragm", "beyond the GE junction"),
        (
            "in the distal oesophagus",
            "in the right mainstem bronchus",
            "at the gastroesophageal junction",
            "above the GE junction",
        ),
    ),
    "nasogastric tube": (
        ("in the stomach", "in the gastric body", "in the gastric fundus", "below the diaphragm"),
        (
            "in the distal oesophagus",
            "in the right lower lobe bronchus",
            "coiled in the oesophagus",
            "in the hypopharynx",
        ),
    ),
}
# A position said without a landmark: the same as any acceptable landmark.
GOOD_POSITION = ("in satisfactory position", "in standard position", "in appropriate position", "well positioned")
TIP_FRAMES = (
    "The {device} tip is {where}.",
    "{device_cap} terminates {where}.",
    "{device_cap} with tip {where}.",
    "The tip of the {device} projects {where}.",
    "{device_cap} in place, tip {where}.",
    "{device_cap} is seen with its tip {where}.",
)
ETT_DISTANCES = (0.5, 1.0, 1.5, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 8.0, 9.5, -1.0, -2.0)


def ett_position_ok(cm_above_carina: float) -> bool:
    return 2.0 <= cm_above_carina <= 7.0


def _tip_text(device: str, where: str, rng: random.Random, frame: str | None = None) -> str:
    frame = frame or rng.choice(TIP_FRAMES)
    if where in GOOD_POSITION:
        return f"{device[0].upper() + device[1:]} {where}."
    return frame.format(device=device, device_cap=device[0].upper() + device[1:], where=where)


def _ett_where(cm: float, rng: random.Random) -> str:
    """A tip's distance from the carina as written: in mm a fifth of the time when under 3 cm, "carina" without "the"
    a fifth of the time."""
    unit_mm = abs(cm) < 3 and rng.random() < 0.2
    amount = f"{abs(cm) * 10:g} mm" if unit_mm else f"{abs(cm):g} cm"
    landmark = "the carina" if rng.random() < 0.8 else "carina"
    return f"{amount} {'below' if cm < 0 else 'above'} {landmark}"


def _tip_place(device: str, rng: random.Random) -> tuple[str, bool, float | None]:
    """One place of a device's tip: (where, misplaced, distance above the carina or None)."""
    good, bad = DEVICES[device]
    if device == "endotracheal tube" and rng.random() < 0.6:
        cm = rng.choice(ETT_DISTANCES)
        return _ett_where(cm, rng), not ett_position_ok(cm), cm
    draw = rng.random()
    if draw < 0.45:
        return rng.choice(bad), True, None
    if draw < 0.55:
        return rng.choice(GOOD_POSITION), False, None
    return rng.choice(good), False, None


def _tip_verdict(before: tuple, after: tuple) -> str:
    """A tip moved in or out of its place, or from one malposition to another (too high against too low), is
    significant; a change of at most
    1 cm, or an acceptable place said another way, is the same; a larger change within the place is insignificant."""
    (where_a, bad_a, cm_a), (where_b, bad_b, cm_b) = before, after
    if bad_a != bad_b:
        return "significant"
    if cm_a is not None and cm_b is not None:
        if bad_a and (cm_a > 7.0) != (cm_b > 7.0):  # too high against too low
            return "significant"
        return "same" if abs(cm_a - cm_b) <= 1.0 else "insignificant"
    if where_a == where_b:
        return "same"
    if bad_a:
        return "significant"
    return "same" if where_a in GOOD_POSITION or where_b in GOOD_POSITION else "insignificant"


# Other names a report gives the same device: a candidate may name it so.
DEVICE_NAMES = {
    "endotracheal tube": ("ET tube", "ETT", "endotracheal tube"),
    "right internal jugular central venous catheter": ("right IJ central line", "central venous catheter", "catheter"),
    "left-sided PICC line": ("left PICC", "PICC line", "left upper extremity PICC"),
    "left internal jugular central line": ("left IJ catheter", "central line", "left internal jugular CVC"),
    "right subclavian catheter": ("right subclavian central line", "catheter", "right subclavian CVC"),
    "feeding tube": ("Dobhoff tube", "enteric feeding tube", "nasoenteric tube"),
    "nasogastric tube": ("NG tube", "enteric tube", "gastric tube"),
}


def device_position_pair(rng: random.Random) -> tuple[str, str, str]:
    """(reference, candidate, verdict) for one device tip, verdict `same`, `insignificant` or `significant`; either
    side may hold the malposition, and the candidate may name the device otherwise (DEVICE_NAMES)."""
    device = rng.choice(sorted(DEVICES))
    frame = rng.choice(TIP_FRAMES)
    other = rng.choice(TIP_FRAMES) if rng.random() < 0.5 else frame  # the candidate's own frame half the time
    named = rng.choice(DEVICE_NAMES[device]) if rng.random() < 0.4 else device
    before = _tip_place(device, rng)
    after = before if rng.random() < 0.15 else _tip_place(device, rng)
    while before[1] and after[1] and (before[2] is None) != (after[2] is None):
        after = _tip_place(device, rng)  # a malposition by distance against one by landmark: no clear verdict
    verdict = _tip_verdict(before, after)
    return _tip_text(device, before[0], rng, frame), _tip_text(named, after[0], rng, other), verdict


def two_devices_pair(rng: random.Random) -> tuple[str, str]:
    """Two different devices, each at one of its places: unrelated findings, however alike their sentences."""
    first, second = rng.sample(sorted(DEVICES), 2)
    return _tip_text(first, _tip_place(first, rng)[0], rng), _tip_text(second, _tip_place(second, rng)[0], rng)
