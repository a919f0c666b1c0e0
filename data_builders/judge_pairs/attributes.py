"""Edits that change one attribute of a finding, or contradict it, each with the label it earns.

Each edit returns `(candidate, label)` or None when it does not apply; the labels are
inference/findings/judge_labels.py's.
Significance follows the finding's clinical level (inference/findings/significance.py, CRIMSON's levels): an attribute
error on a benign or expected finding (a calcified granuloma) is insignificant, on any other finding significant,
except where the rule says otherwise (a step between neighbouring mild words, a probable finding called likely).
"""

from __future__ import annotations

import random
import re

from radmetrics.inference.findings.pair_features import AGAINST, INTENSIFIER, frame, hedge_level, hedge_step_matters
from radmetrics.inference.findings.significance import significance
from radmetrics.inference.text.word_rules import names_abnormality

from ..pairs import edit_lexicons as fx
from .measurement import change_measurement, change_percent


def attribute(name: str, significant: bool) -> str:
    return f"attribute:{name}:{'significant' if significant else 'insignificant'}"


def is_finding(sentence: str) -> bool:
    """A statement the edits may change: an abnormal finding (the pair builders' rule) that names an abnormality in
    the entity lexicon ("Recommend dedicated views of the ribs." is neither)."""
    return fx.is_abnormal_finding(sentence) and names_abnormality(sentence)


def matters(sentence: str) -> bool:
    """An attribute error on this finding is clinically significant unless the finding is benign or expected."""
    return significance(sentence) != "benign_expected"


def _replace(sentence: str, old: str, new: str) -> str:
    pattern = re.compile(rf"\b{re.escape(old)}\b", re.I)

    def keep_case(match: re.Match) -> str:
        return new[0].upper() + new[1:] if match.group(0)[0].isupper() else new

    return pattern.sub(keep_case, sentence, count=1)


def _words_in(sentence: str, words) -> list[str]:
    return [w for w in words if re.search(rf"\b{re.escape(w)}\b", sentence, re.I)]


SEVERITY_LADDERS = (("minimal", "mild", "moderate", "severe"), ("trace", "small", "moderate", "large"))
NEIGHBOURS_INSIGNIFICANT = {frozenset(("minimal", "mild")), frozenset(("trace", "small"))}


def severity(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    for ladder in SEVERITY_LADDERS:
        present = _words_in(sentence, ladder)
        if present:
            old = present[0]
            new = rng.choice([w for w in ladder if w != old])
            significant = frozenset((old, new)) not in NEIGHBOURS_INSIGNIFICANT and matters(sentence)
            return _replace(sentence, old, new), attribute("severity", significant)
    return None


def measurement(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    found = change_measurement(sentence, rng) or change_percent(sentence, rng)
    if found is None:
        return None
    text, significant = found
    return text, attribute("measurement", significant)


# Places within an organ: a finding moved between lobes or zones of the same side.
LOBE_SWAPS = (
    ("right upper lobe", ("right middle lobe", "right lower lobe")),
    ("right middle lobe", ("right upper lobe", "right lower lobe")),
    ("right lower lobe", ("right upper lobe", "right middle lobe")),
    ("left upper lobe", ("left lower lobe", "lingula")),
    ("left lower lobe", ("left upper lobe", "lingula")),
    ("lingula", ("left lower lobe", "left upper lobe")),
    ("upper lobe", ("lower lobe", "middle lobe")),
    ("lower lobe", ("upper lobe",)),
    ("apex", ("base",)),
    ("apical", ("basilar",)),
    ("base", ("apex",)),
    ("bases", ("apices",)),
    ("basilar", ("apical",)),
    ("upper zone", ("lower zone",)),
    ("midlung", ("lung base", "upper lung")),
    ("perihilar", ("peripheral",)),
    ("anterior", ("posterior",)),
    ("posterior", ("anterior",)),
    ("bilateral", ("right", "left")),
)


def location(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    if not is_finding(sentence):
        return None
    for old, options in LOBE_SWAPS:
        if re.search(rf"\b{re.escape(old)}\b", sentence, re.I):
            return _replace(sentence, old, rng.choice(options)), attribute("location", matters(sentence))
    return None


def laterality(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    side = _words_in(sentence, ("left", "right"))
    if not side or not is_finding(sentence):
        return None
    old = side[0]
    return _replace(sentence, old, "right" if old.lower() == "left" else "left"), "contradiction:laterality"


def negation(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    found = (fx.negate(sentence) if is_finding(sentence) else None) or fx.affirm(sentence)
    return (found, "contradiction:negation") if found else None


# Hedges a radiologist writes, by strength: "possible" changes management, "probable" barely.
STRONG_HEDGES = (
    "Possible {f}",
    "Questionable {f}",
    "{F}, cannot be excluded",
    "Findings may represent {f}",
    "Suspected {f}",
    "Cannot exclude {f}",
    "{F} is not excluded",
    "Findings could reflect {f}",
    "Question of {f}",
    "Cannot entirely exclude {f}",
    "Concern for {f}",
    "Appearance suggests {f}",
    "{F} may be present",
)
WEAK_HEDGES = (
    "Probable {f}",
    "{F}, likely",
    "Likely {f}",
    "Presumed {f}",
    "Findings favor {f}",
    "Most likely {f}",
    "{F}, probably",
    "Findings highly suspicious for {f}",
)
# Hedges that lean against the finding ("probably not"), the far end of the scale.
AGAINST_HEDGES = (
    "{F} is unlikely",
    "{F} is doubtful",
    "Findings are unlikely to represent {f}",
    "{F}, not likely",
    "{F} is less likely",
    "{F} less likely",
)
TEMPLATES = {1: WEAK_HEDGES, 2: STRONG_HEDGES, AGAINST: AGAINST_HEDGES}
_HEDGE = re.compile(
    rf"\b({INTENSIFIER} (?:suspicious for|concerning for|suggestive of)|"
    r"possible|possibly|questionable|probable|probably|likely|suspected|may represent|may be|could represent|"
    r"cannot be excluded|can not be excluded|cannot exclude|presumed|suggestive of|suspicious for|"
    r"concerning for)\b\s*",
    re.I,
)


def certainty(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A hedge added to a definite finding, or a hedged finding made definite, or (a third of the time) its hedge
    replaced by another. Only an edit that changes the finding's certainty as written is made: a sentence with a hedge
    the edit cannot remove ("atelectasis versus scarring"), or with a second one that would stay, gives no pair.
    `certainty_error` says which changes are errors and which of those are significant."""
    level = hedge_level(frame(sentence))
    if level:
        stripped = _unhedged(sentence)
        if stripped is None:
            return None
        if rng.random() < 1 / 3 and is_finding(stripped) and len(stripped.split()) <= 10:
            new = _new_level(rng)
            return _hedged(stripped, new, rng), certainty_error(level, new, matters(sentence))
        return stripped, certainty_error(level, 0, matters(sentence))
    if not is_finding(sentence) or len(sentence.split()) > 10:
        return None
    new = _new_level(rng)
    return _hedged(sentence, new, rng), certainty_error(0, new, matters(sentence))


def _new_level(rng: random.Random) -> int:
    """A hedge's level for an edit: strong (2) most often, weak (1) or against (AGAINST) less often."""
    draw = rng.random()
    return 2 if draw < 0.6 else 1 if draw < 0.8 else AGAINST


def certainty_error(before: int, after: int, significant_finding: bool) -> str:
    """The label of a finding's hedge level changed from `before` to `after` (hedge_level: 0 definite, 1 "probably so",
    2 "possibly", AGAINST "probably not"). The same level is the same finding; a step between definite and "probably
    so", or between "possibly" and either neighbour, is an insignificant error ("possible" against "probable":
    RadPref's radiologists mark no error there; "possibly" against "probably not" likewise, both leaving the diagnosis
    open); a definite finding made possible, a definite or probable one denied by a hedge against it, or the reverse,
    is significant on a finding that matters."""
    if before == after:
        return "same"
    return attribute("certainty", hedge_step_matters(before, after) and significant_finding)


# A word that qualifies the hedge after it ("not likely", "most suspicious for", "very likely"): removing the hedge
# alone would leave "Pneumonia is not ." or "mass, most malignancy", so such a sentence gives no pair.
_QUALIFIER_BEFORE = re.compile(rf"\b(?:not|no|less|more|{INTENSIFIER})\s*$", re.I)


def _unhedged(sentence: str) -> str | None:
    """The sentence without its one hedge, or None when it has none the edit can remove, or another would stay."""
    found = _HEDGE.search(sentence)
    if not found or _QUALIFIER_BEFORE.search(sentence[: found.start()]):
        return None
    stripped = _HEDGE.sub("", sentence, count=1).strip()
    stripped = re.sub(r"^(of|for)\s+", "", stripped, flags=re.I)
    if len(stripped.split()) < 2 or hedge_level(frame(stripped)):
        return None
    return stripped[0].upper() + stripped[1:]


def _hedged(sentence: str, level: int, rng: random.Random) -> str:
    """A definite finding hedged with one of the templates of that level."""
    body = sentence.strip().rstrip(".")
    body = re.sub(r"^(there is|there are)\s+(an?\s+)?", "", body, flags=re.I)
    templates = TEMPLATES[level]
    template = rng.choice([f for f in templates if "," not in body or not f.startswith("{F},")])  # one comma at most
    text = template.format(f=body[0].lower() + body[1:], F=body[0].upper() + body[1:]) + "."
    return text[0].upper() + text[1:]


# A diagnosis and a vaguer description of the same appearance; the reverse edit is overinterpretation.
SPECIFIC_TO_VAGUE = (
    ("pneumonia", ("opacity", "airspace disease", "infiltrate")),
    ("consolidation", ("opacity", "density")),
    ("pulmonary edema", ("increased interstitial markings", "vascular congestion")),
    ("mass", ("opacity", "density")),
    ("metastases", ("nodules", "nodular opacities")),
    ("atelectasis", ("opacity", "streaky density")),
    ("emphysema", ("hyperinflation", "hyperexpanded lungs")),
    ("cardiomegaly", ("prominent cardiac silhouette",)),
    ("pleural effusion", ("blunting of the costophrenic angle",)),
    ("fracture", ("deformity", "irregularity")),
    ("hiatal hernia", ("retrocardiac density",)),
    ("granuloma", ("nodule",)),
    ("lymphadenopathy", ("hilar fullness",)),
    ("scarring", ("opacity",)),
    ("tension pneumothorax", ("pneumothorax",)),
)


def specificity(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A diagnosis made vaguer, or a description made a diagnosis (overinterpretation)."""
    if not is_finding(sentence):
        return None
    options = []
    for specific, vague in SPECIFIC_TO_VAGUE:
        found = re.compile(rf"\b{re.escape(specific)}\b", re.I)
        rest = found.sub(" ", sentence)  # what the sentence names besides the diagnosis
        named = [v for v in vague if re.search(rf"\b{re.escape(v)}\b", rest, re.I)]
        if found.search(sentence):  # never "opacity, likely opacity"
            options += [(specific, v) for v in vague if v not in named]
        else:  # never "tension tension pneumothorax"
            options += [(v, specific) for v in named]
    if not options:
        return None
    old, new = rng.choice(options)
    edited = _replace(sentence, old, new)
    return edited, attribute("specificity", matters(sentence) or matters(edited))


CHANGE_SWAPS = {
    "increased": ("decreased", "unchanged"),
    "increasing": ("decreasing", "stable"),
    "decreased": ("increased", "unchanged"),
    "decreasing": ("increasing",),
    "improved": ("worsened", "unchanged"),
    "improving": ("worsening",),
    "worsened": ("improved", "unchanged"),
    "worsening": ("improving", "stable"),
    "new": ("unchanged", "resolving"),
    "stable": ("increased", "decreased"),
    "unchanged": ("increased", "decreased", "new"),
    "enlarging": ("decreasing", "stable"),
    "persistent": ("new", "improving"),
}
CHANGE_FRAMES = ("{F}, {w} from the prior study.", "{W} {f}.", "{F} is {w} compared with the prior radiograph.")


def interval_change(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """A change since the prior study reversed, or one added to both sides and reversed in the candidate."""
    present = [w for w in CHANGE_SWAPS if re.search(rf"\b{w}\b", sentence, re.I)]
    if present:
        old = present[0]
        return _replace(sentence, old, rng.choice(CHANGE_SWAPS[old])), attribute("interval_change", True)
    return None


def with_interval_change(sentence: str, rng: random.Random) -> tuple[str, str, str] | None:
    """(reference, candidate, label): the finding given a change word, then the same finding with another."""
    if not is_finding(sentence) or len(sentence.split()) > 9:
        return None
    body = re.sub(r"^(there is|there are)\s+(an?\s+)?", "", sentence.strip().rstrip("."), flags=re.I)
    frame = rng.choice(CHANGE_FRAMES)
    before = rng.choice(("increased", "decreased", "unchanged", "new", "improved", "worsened"))
    after = rng.choice(CHANGE_SWAPS[before])

    def fill(word: str) -> str:
        return frame.format(F=body[0].upper() + body[1:], f=body[0].lower() + body[1:], w=word, W=word.capitalize())

    return fill(before), fill(after), attribute("interval_change", True)


EDITS = {
    "severity": severity,
    "measurement": measurement,
    "location": location,
    "laterality": laterality,
    "negation": negation,
    "certainty": certainty,
    "specificity": specificity,
    "interval_change": interval_change,
}
