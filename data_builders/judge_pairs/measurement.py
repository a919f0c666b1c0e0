"""Sizes and device tip positions: the tolerance a radiologist accepts, and edits beyond it.

Sizes. Two readers measuring the same nodule or mass differ by about 1-2 mm (interobserver variation on CT is of that
order, and on a radiograph larger): a difference of at most 2 mm, or of at most 20% of the size, is the same
measurement. Up to half the size again (20-50%) is an insignificant measurement error; a change of 50% or more (an
8 mm nodule called 18 mm, a size that doubles or halves) is significant: it changes a nodule's follow-up category.

Device tips. An endotracheal tube tip sits 3-7 cm above the carina; nearer than 2 cm, at or below the carina, or in a
mainstem bronchus is malpositioned; a central line's tip belongs in the lower superior vena cava or at the cavoatrial
junction, not deep in the right atrium or in a neck or arm vein; a gastric tube's tip in the stomach, not in the
oesophagus. A position change that moves a tip in or out of its place is significant; a change of at most 1 cm within
it is the same position; a larger change within it is an insignificant error.
"""

from __future__ import annotations

import random
import re

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


# Device tips: (device, acceptable landmarks, malpositioned landmarks).
DEVICES = {
    "endotracheal tube": (
        ("in the mid trachea", "at the level of the clavicular heads"),
        ("in the right mainstem bronchus", "in the left mainstem bronchus", "in the oesophagus", "at the carina"),
    ),
    "right internal jugular central venous catheter": (
        ("in the lower superior vena cava", "at the cavoatrial junction"),
        ("in the right atrium", "in the right subclavian vein", "in the internal jugular vein"),
    ),
    "left-sided PICC line": (
        ("in the distal superior vena cava", "at the cavoatrial junction"),
        ("in the right atrium", "in the left subclavian vein", "in the left axillary vein"),
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
        ("in the stomach", "in the duodenum"),
        ("in the distal oesophagus", "in the right mainstem bronchus", "at the gastroesophageal junction"),
    ),
    "nasogastric tube": (
        ("in the stomach", "in the gastric body"),
        ("in the distal oesophagus", "in the right lower lobe bronchus", "coiled in the oesophagus"),
    ),
}
TIP_FRAMES = (
    "The {device} tip is {where}.",
    "{device_cap} terminates {where}.",
    "{device_cap} with tip {where}.",
    "The tip of the {device} projects {where}.",
    "{device_cap} in place, tip {where}.",
    "{device_cap} is seen with its tip {where}.",
)


def ett_position_ok(cm_above_carina: float) -> bool:
    return 2.0 <= cm_above_carina <= 7.0


def _tip_text(device: str, where: str, rng: random.Random, frame: str | None = None) -> str:
    frame = frame or rng.choice(TIP_FRAMES)
    return frame.format(device=device, device_cap=device[0].upper() + device[1:], where=where)


def _ett_where(cm: float) -> str:
    if cm < 0:
        return f"{-cm:g} cm below the carina"
    return f"{cm:g} cm above the carina"


def device_position_pair(rng: random.Random) -> tuple[str, str, str]:
    """(reference, candidate, verdict) for one device tip, verdict `same`, `insignificant` or `significant`."""
    device = rng.choice(sorted(DEVICES))
    frame = rng.choice(TIP_FRAMES)
    other = rng.choice(TIP_FRAMES) if rng.random() < 0.5 else frame  # the candidate's own frame half the time
    if device == "endotracheal tube" and rng.random() < 0.7:
        before = rng.choice((2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5))
        after = rng.choice(
            (before + 0.5, before - 0.5, before + 1, before - 1.5, before + 2, 1.0, 0.5, -1.0, -2, 8.0, 9.5)
        )
        if ett_position_ok(before) != ett_position_ok(after):
            verdict = "significant"
        elif abs(after - before) <= 1.0:
            verdict = "same"
        else:
            verdict = "insignificant"
        return (
            _tip_text(device, _ett_where(before), rng, frame),
            _tip_text(device, _ett_where(after), rng, other),
            verdict,
        )
    good, bad = DEVICES[device]
    before = rng.choice(good)
    draw = rng.random()
    if draw < 0.55:
        after, verdict = rng.choice(bad), "significant"
    elif draw < 0.8:
        after, verdict = rng.choice([g for g in good if g != before]), "insignificant"
    else:
        after, verdict = before, "same"
    return _tip_text(device, before, rng, frame), _tip_text(device, after, rng, other), verdict
