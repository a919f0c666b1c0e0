"""What a reference finding and a candidate finding say about each attribute, side by side: the inputs of the feature
judge (feature_judge.py), which learns from the data builders' logged edits how these differences decide a pair.

Each finding is read into a `FindingFrame`: its sizes (in mm), a device tip's distance from the carina and the places
it names, its hedges, the diagnoses and the vaguer descriptions it uses, its places within an organ (side, lobe, zone,
segment), its severity words, polarity and interval change. `pair_features` compares two frames (and the two
findings' sentence-embedding cosine) in a fixed list of numbers, FEATURE_NAMES. The parsers only read; every decision
(how large a size change is an error, when a tip is malpositioned, which hedge matters) is the trained model's.

The vocabularies follow radiology usage (Fleischner Society glossary; device-tip positions as in Godoy et al.,
"Chest radiography in the ICU", AJR 2012) and the judge-pair builders' edit lists
(data_builders/judge_pairs/), so that what the builders edit, the frame reads.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import word_rules as rules
from ..text.sentences import LOBE_ABBREVIATIONS
from .significance import LEVELS, significance

# Abbreviations the frame reads as words (semantic_green's own expansion, text/sentences.py, runs before this).
_LOCAL_ABBREVIATIONS = {
    **LOBE_ABBREVIATIONS,
    "cvc": "central venous catheter",
    "svc": "superior vena cava",
    "ng": "nasogastric",
    "og": "orogastric",
    "et": "endotracheal",
    "gej": "gastroesophageal junction",
    "ge": "gastroesophageal",
    "ra": "right atrium",
    "rv": "right ventricle",
    "innominate": "brachiocephalic",
    "oesophagus": "esophagus",
    "oesophageal": "esophageal",
}
_ABBREVIATION = re.compile(r"\b(" + "|".join(_LOCAL_ABBREVIATIONS) + r")\b", re.I)

_SIZE = re.compile(
    r"\b(\d+(?:\.\d+)?)(?:\s*(?:x|×|by)\s*(\d+(?:\.\d+)?))?(?:\s*(?:x|×|by)\s*(\d+(?:\.\d+)?))?\s*(cm|mm)\b", re.I
)
_CARINA = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(cm|mm)\s+(above|below|from|superior to|inferior to|proximal to|distal to|beyond|past)\s+"
    r"(?:the\s+)?(?:level of the\s+)?carina\b",
    re.I,
)

DEVICES = (
    "tube",
    "catheter",
    "line",
    "picc",
    "pacemaker",
    "lead",
    "leads",
    "drain",
    "port",
    "stent",
    "pacer",
    "cannula",
    "wire",
    "tracheostomy",
    "dobhoff",
)
# The kind of device a finding names (its text normalised; semantic_green has read "ETT" and "NGT" as words before the
# judge), so that two wordings of one device ("right internal jugular central catheter", "the catheter ... in the
# lower SVC") are told from two devices ("orogastric tube", "endotracheal tube"). A bare "catheter" or "line" is a
# venous one unless the finding names another.
_DEVICE_KINDS = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("airway", r"\b(?:endotracheal|tracheostomy|tracheal tube)"),
        ("enteric", r"\b(?:nasogastric|orogastric|feeding tube|enteric|dobhoff|gastric tube|nasoenteric)"),
        ("pleural", r"\b(?:chest tube|pleural (?:drain|catheter|tube)|pigtail|thoracostomy|chest drain)"),
        ("cardiac", r"\b(?:pacemaker|pacer|defibrillator|icd|leads?)\b"),
        (
            "venous",
            r"\b(?:picc|central venous|central line|venous catheter|swan|pulmonary artery catheter|dialysis|port)\b",
        ),
    )
)
_GENERIC_LINE = re.compile(r"\b(?:catheter|line)\b")


def device_kinds(text: str) -> frozenset[str]:
    """The kinds of device a normalised finding names (airway, enteric, pleural, cardiac, venous)."""
    kinds = frozenset(kind for kind, pattern in _DEVICE_KINDS if pattern.search(text))
    return kinds or (frozenset({"venous"}) if _GENERIC_LINE.search(text) else frozenset())


# Where a device tip should not be (a malposition whatever the device), and where one usually belongs.
MALPOSITIONS = (
    "mainstem",
    "bronchus",
    "bronchi",
    "esophagus",
    "esophageal",
    "right atrium",
    "right ventricle",
    "subclavian vein",
    "axillary vein",
    "brachiocephalic vein",
    "jugular vein",
    "thoracic inlet",
    "coiled",
    "above the diaphragm",
    "at the carina",
    "below the carina",
    "pharynx",
    "hypopharynx",
    "gastroesophageal junction",
    "right atrial",
    "azygos",
    "oropharynx",
    "nasopharynx",
    "too high",
    "too low",
    "high position",
    "low position",
    "low lying",
    "high riding",
    "level of the carina",
    "fissure",
    "outside the pleural space",
    "outside the pleura",
    "outside the rib cage",
    "chest wall",
    "subcutaneous",
    "soft tissues",
)
GOOD_PLACES = (
    "right atrial appendage",
    "right atrium appendage",
    "right ventricular apex",
    "right ventricle apex",
    "stomach",
    "gastric",
    "duodenum",
    "below the diaphragm",
    "superior vena cava",
    "cavoatrial junction",
    "mid trachea",
    "clavicular heads",
    "satisfactory position",
    "good position",
    "standard position",
    "appropriate position",
    "expected position",
    "in place",
    "junction of the superior vena cava",
    "junction of the superior vena cava and right atrium",
    "superior vena cava right atrium junction",
    "superior vena cava right atrial junction",
    "cavoatrial",
    "cavo atrial",
    "atriocaval",
    "caval atrial",
    "below the hemidiaphragm",
    "below the left hemidiaphragm",
    "below the level of the diaphragm",
    "below the left diaphragm",
    "subdiaphragmatic",
    "left upper quadrant",
    "beyond the gastroesophageal junction",
    "past the gastroesophageal junction",
    "distal to the gastroesophageal junction",
    "below the gastroesophageal junction",
    "well positioned",
    "appropriately positioned",
    "satisfactorily positioned",
    "adequately positioned",
    "acceptable position",
    "optimal position",
)

STRONG_HEDGES = (
    "possible",
    "possibly",
    "questionable",
    "cannot be excluded",
    "can not be excluded",
    "cannot be ruled out",
    "not excluded",
    "may represent",
    "may be",
    "could represent",
    "could be",
    "might",
    "suspected",
    "suspicious for",
    "concerning for",
    "suggestive of",
    "differential",
    "versus",
    "vs",
    "equivocal",
    "indeterminate",
    "cannot exclude",
    "can not exclude",
    "cannot rule out",
    "not ruled out",
    "not entirely excluded",
    "difficult to exclude",
    "question of",
    "raising the possibility",
    "raises the possibility",
    "possibility of",
    "worrisome for",
    "uncertain",
    "perhaps",
    "may reflect",
    "may indicate",
    "could reflect",
    "could indicate",
    "suspect",
    "suspicion for",
    "suspicion of",
    "may",
    "could",
    "cannot be entirely excluded",
    "cannot be completely excluded",
    "cannot entirely exclude",
    "can't be excluded",
    "can't exclude",
    "can't rule out",
    "not be excluded",
    "concern for",
    "raising concern",
    "suggests",
    "suggesting",
    "suggestive",
    "query",
    "?",
)
# "Probably not": the hedges that lean against the diagnosis they name, the far end of the scale (Panicek and Hricak,
# "How sure are you, doctor?", 2016): "unlikely to represent pneumonia" all but denies it, and "pneumonia less likely"
# (about one in four on their scale) leans the same way.
AGAINST_HEDGES = (
    "unlikely",
    "doubtful",
    "not likely",
    "doubt",
    "improbable",
    "probably not",
    "likely not",
    "less likely",
)
_NO_DOUBT = re.compile(r"\b(?:no|without|little) doubt\b")
# "Less likely" offering a second diagnosis after the first ("atelectasis or, less likely, pneumonia") makes a
# differential, read as "possibly"; alone ("pneumonia less likely") it leans against the diagnosis.
_LESS_LIKELY_ALTERNATIVE = re.compile(r"\bor,?\s+less likely\b")
# A strong hedge made emphatic ("highly suspicious for malignancy") says "probably so": read at the weak hedges' level.
INTENSIFIER = r"(?:highly|very|strongly|most|quite|extremely)"  # the words that make a hedge emphatic (builders too)
_INTENSIFIED = re.compile(
    rf"\b{INTENSIFIER} "
    r"(?:suspicious for|concerning for|suggestive of|worrisome for|suspicious of|suggests?|suggesting)\b"
)
# "Probably so" on the hedging scale radiologists are taught (Panicek and Hricak, "How sure are you, doctor?", 2016)
WEAK_HEDGES = (
    "probable",
    "probably",
    "likely",
    "most likely",
    "presumed",
    "presumably",
    "presumptive",
    "favor",
    "favored",
    "favoring",
    "thought to represent",
    "felt to represent",
    "believed to represent",
    "appears to represent",
    "in all likelihood",
)
DEFINITE = (
    "consistent with",
    "compatible with",
    "diagnostic of",
    "definite",
    "represents",
    "due to",
    "secondary to",
    "in keeping with",
    "indicative of",
    "characteristic of",
    "typical of",
)

# Diagnoses, and the vaguer descriptions of an appearance that stand for them (the builders' SPECIFIC_TO_VAGUE).
DIAGNOSES = (
    "pneumonia",
    "consolidation",
    "pulmonary edema",
    "edema",
    "mass",
    "metastases",
    "metastasis",
    "metastatic",
    "atelectasis",
    "collapse",
    "emphysema",
    "cardiomegaly",
    "pleural effusion",
    "effusion",
    "effusions",
    "fracture",
    "hiatal hernia",
    "granuloma",
    "lymphadenopathy",
    "scarring",
    "fibrosis",
    "dissection",
    "aneurysm",
    "neoplasm",
    "neoplastic",
    "malignancy",
    "carcinoma",
    "cancer",
    "tumor",
    "abscess",
    "tuberculosis",
    "pneumothorax",
    "aspiration",
    "infection",
    "sarcoidosis",
    "interstitial lung disease",
    "bronchiectasis",
    "nodule",
    "nodules",
    "cavitary",
    "cavitating",
    "cavity",
    "pneumoperitoneum",
    "pneumomediastinum",
    "heart failure",
    "tension",
    "atelectatic",
    "scar",
    "emphysematous",
    "fibrotic",
)
VAGUE = (
    "opacity",
    "opacities",
    "opacification",
    "density",
    "densities",
    "infiltrate",
    "infiltrates",
    "airspace disease",
    "interstitial markings",
    "markings",
    "vascular congestion",
    "congestion",
    "deformity",
    "irregularity",
    "blunting",
    "prominent",
    "prominence",
    "fullness",
    "hyperinflation",
    "hyperexpanded",
    "shadow",
    "abnormality",
    "lesion",
    "changes",
    "lucency",
    "lucencies",
)
# Places within an organ, by kind; a place is the phrase as written, after abbreviations are read.
LOBES = ("upper lobe", "middle lobe", "lower lobe", "lingula", "lingular")
ZONES = (
    "apex",
    "apices",
    "apical",
    "base",
    "bases",
    "basilar",
    "basal",
    "bibasilar",
    "upper zone",
    "upper zones",
    "mid zone",
    "mid zones",
    "middle zone",
    "middle zones",
    "mid lung",
    "mid lungs",
    "midlung",
    "lower zone",
    "lower zones",
    "upper lung",
    "lower lung",
    "perihilar",
    "hilar",
    "retrocardiac",
    "peripheral",
    "subpleural",
    "costophrenic",
)
SEGMENTS = (
    "superior segment",
    "posterior basal",
    "anterior basal",
    "lateral basal",
    "medial basal",
    "anteromedial basal",
    "apicoposterior",
    "apical segment",
    "anterior segment",
    "posterior segment",
    "lateral segment",
    "medial segment",
    "superior lingular",
    "inferior lingular",
    "superior lingula",  # read as "superior lingular" (CANONICAL)
    "inferior lingula",
)
_SEGMENT = re.compile(r"\b(" + "|".join(sorted(SEGMENTS, key=len, reverse=True)) + r")\b")
SEGMENT_WORDS = ("anterior", "posterior", "lateral", "medial", "superior", "inferior")
# Zones that name the same part of the lung: "apical" and "apex", "bases" and "basilar" are one place.
ZONE_GROUPS = {
    "apex": "upper",
    "apices": "upper",
    "apical": "upper",
    "upper zone": "upper",
    "upper zones": "upper",
    "lower zones": "lower",
    "mid zones": "middle",
    "upper lung": "upper",
    "base": "lower",
    "bases": "lower",
    "basilar": "lower",
    "basal": "lower",
    "bibasilar": "lower",
    "lower zone": "lower",
    "lower lung": "lower",
    "costophrenic": "lower",
    "mid zone": "middle",
    "middle zone": "middle",
    "middle zones": "middle",
    "mid lung": "middle",
    "mid lungs": "middle",
    "midlung": "middle",
    "perihilar": "hilar",
    "hilar": "hilar",
    "retrocardiac": "retrocardiac",
    "peripheral": "peripheral",
    "subpleural": "peripheral",
}
LOBE_GROUPS = {"lingular": "lingula"}

_STOPWORDS = frozenset(
    "a an the of in at on to is are was were be been with and or there this that its it from for by as no not "
    "seen noted again also which measuring measures measure approximately about".split()
)


# Forms of one word that say the same thing ("nodules" and "nodule", "cavitating" and "cavitary").
CANONICAL = {
    "effusions": "effusion",
    "nodules": "nodule",
    "metastases": "metastasis",
    "metastatic": "metastasis",
    "opacities": "opacity",
    "lucencies": "lucency",
    "densities": "density",
    "infiltrates": "infiltrate",
    "cavitating": "cavitary",
    "cavity": "cavitary",
    "atelectatic": "atelectasis",
    "scar": "scarring",
    "emphysematous": "emphysema",
    "fibrotic": "fibrosis",
    "cancer": "malignancy",
    "carcinoma": "malignancy",
    "neoplastic": "neoplasm",
    "prominence": "prominent",
    "superior lingula": "superior lingular",
    "inferior lingula": "inferior lingular",
    "pleural effusion": "effusion",
    "pulmonary edema": "edema",
    # one place of a central line's tip, however it is written
    "junction of the superior vena cava and right atrium": "cavoatrial junction",
    "junction of the superior vena cava": "cavoatrial junction",
    "superior vena cava right atrium junction": "cavoatrial junction",
    "superior vena cava right atrial junction": "cavoatrial junction",
    "cavoatrial": "cavoatrial junction",
    "cavo atrial": "cavoatrial junction",
    "atriocaval": "cavoatrial junction",
    "caval atrial": "cavoatrial junction",
    "right atrium appendage": "right atrial appendage",
    "right ventricle apex": "right ventricular apex",
    "below the diaphragm": "below the diaphragm",
    "below the hemidiaphragm": "below the diaphragm",
    "below the left hemidiaphragm": "below the diaphragm",
    "below the level of the diaphragm": "below the diaphragm",
    "below the left diaphragm": "below the diaphragm",
    "subdiaphragmatic": "below the diaphragm",
}


def _phrases(text: str, vocabulary) -> frozenset[str]:
    return frozenset(CANONICAL.get(p, p) for p in vocabulary if _phrase_pattern(p).search(text))


def _places(text: str, vocabulary) -> frozenset[str]:
    """The places named, the longest phrase first and each part of the text read once: "the SVC/RA junction" is the
    cavoatrial junction, not also the superior vena cava."""
    found = set()
    for phrase in sorted(vocabulary, key=len, reverse=True):
        pattern = _phrase_pattern(phrase)
        if pattern.search(text):
            found.add(CANONICAL.get(phrase, phrase))
            text = pattern.sub(" ", text)
    return frozenset(found)


@lru_cache(maxsize=4096)
def _phrase_pattern(phrase: str) -> re.Pattern:
    """A phrase as whole words; "?" (a query written before a finding, "?aspiration") where a word follows it."""
    if phrase == "?":
        return re.compile(r"\?\s*(?=[a-z])")
    return re.compile(rf"\b{re.escape(phrase)}\b")


# Descriptions radiologists write for a diagnosis, read as the diagnosis ("enlarged heart" is cardiomegaly).
_NOT_A_MATERIAL = "".join(
    f"(?<!{word} )" for word in ("bone", "air", "fat", "fluid", "water", "metal", "metallic", "calcific", "calcium")
)
_SAME_AS_DIAGNOSIS = (
    (re.compile(r"\b(?:enlarged (?:heart|cardiac silhouette)|cardiac enlargement)\b"), "cardiomegaly"),
    (  # a degree word stays: "the heart is mildly enlarged" -> "mildly cardiomegaly"
        re.compile(
            r"\b(?:the )?(?:heart|cardiac silhouette) (?:is |appears )?((?:mildly |moderately |markedly )?)enlarged\b"
        ),
        r"\1cardiomegaly",
    ),
    (re.compile(r"\bpleural fluid\b"), "pleural effusion"),
    # synonyms and the descriptions that are the diagnosis itself (a nodular opacity is a nodule, not a vaguer one)
    # not an adjective sharing its noun with another ("reticular and nodular opacities" is not a nodule)
    (
        re.compile(
            r"(?<!reticular and )(?<!reticular, )(?<!reticular or )(?<!interstitial and )"
            r"\bnodular (?:opacity|opacities|density|densities)\b"
        ),
        "nodule",
    ),
    (re.compile(r"\b(?:adenopathy|lymph node enlargement|enlarged lymph nodes)\b"), "lymphadenopathy"),
    (re.compile(r"\bsarcoid\b"), "sarcoidosis"),
    (re.compile(r"\bmediastinal emphysema\b"), "pneumomediastinum"),
    (
        re.compile(
            r"\bfree (?:intraperitoneal |subdiaphragmatic )?(?:air|gas) (?:under|beneath) the\b"
            r"(?: (?:right|left|both|bilateral)(?: and (?:right|left))?)?(?: (?:hemi[- ]?)?diaphragms?\b)?"
        ),
        "pneumoperitoneum",
    ),
    (re.compile(r"\bfree intraperitoneal (?:air|gas)\b"), "pneumoperitoneum"),
    (re.compile(r"\bfree subdiaphragmatic (?:air|gas)\b|\bsubdiaphragmatic free (?:air|gas)\b"), "pneumoperitoneum"),
    (re.compile(r"\boedema\b"), "edema"),
    # a density and an opacity are one description on a radiograph; bone density, and air, fat, fluid or metal density
    # (what something looks like), are not
    (re.compile(_NOT_A_MATERIAL + r"\bdensities\b"), "opacities"),
    (re.compile(_NOT_A_MATERIAL + r"\bdensity\b"), "opacity"),
    (re.compile(r"(?<!non )(?<!non-)(?<!non\u2013)\b(?:infectious|infective) consolidation\b"), "pneumonia"),
)


_SAME_AS_DIAGNOSIS_ANY_CASE = tuple((re.compile(p.pattern, re.I), diagnosis) for p, diagnosis in _SAME_AS_DIAGNOSIS)


def read_as_diagnoses(text: str) -> str:
    """The text with the descriptions that name a diagnosis read as it, in any case ("Enlarged cardiac silhouette" ->
    "cardiomegaly", "Mediastinal emphysema" -> "pneumomediastinum"): what judge=model's matcher embeds, so that a
    synonym is matched to the finding it names."""
    for pattern, diagnosis in _SAME_AS_DIAGNOSIS_ANY_CASE:
        text = pattern.sub(diagnosis, text)
    return text


def normalised(text: str) -> str:
    """Lower case, abbreviations read as words, hyphens as spaces ("moderate-sized" -> "moderate sized"), and the
    descriptions that name a diagnosis read as it ("enlarged heart" -> "cardiomegaly")."""
    text = _ABBREVIATION.sub(lambda m: _LOCAL_ABBREVIATIONS[m.group(1).lower()], text.lower())
    text = re.sub(r"[-/]", " ", text)
    for pattern, diagnosis in _SAME_AS_DIAGNOSIS:
        text = pattern.sub(diagnosis, text)
    return text


@dataclass(frozen=True)
class FindingFrame:
    sizes_mm: tuple[float, ...]
    percents: tuple[float, ...]  # ratios and percentages, as percentages ("cardiothoracic ratio of 0.58": 58)
    carina_cm: float | None  # a tip's signed distance above the carina (below: negative)
    device: bool
    device_kinds: frozenset[str]
    malpositions: frozenset[str]
    good_places: frozenset[str]
    strong_hedges: frozenset[str]
    weak_hedges: frozenset[str]  # an emphatic strong hedge ("highly suspicious for") among them
    against_hedges: frozenset[str]
    definite: frozenset[str]
    diagnoses: frozenset[str]
    vague: frozenset[str]
    interpreted: frozenset[str]  # diagnoses read into a description ("opacity, consistent with X")
    sides: frozenset[str]
    lobes: frozenset[str]
    zones: frozenset[str]
    segments: frozenset[str]
    severities: frozenset[int]
    severity_words: frozenset[str]
    side_words: tuple[int, int]  # how many times "left" and "right" are written, beside a side something is pushed to
    level: str  # the finding's clinical significance (significance.LEVELS)
    normal: bool
    changes: frozenset[str]
    words: frozenset[str]


# A good place is read before the malpositions it names: "beyond the gastroesophageal junction" is in the stomach, "the
# junction of the superior vena cava and right atrium" is not in the atrium.
_GOOD_PLACE = re.compile(r"\b(" + "|".join(re.escape(p) for p in sorted(GOOD_PLACES, key=len, reverse=True)) + r")\b")

_DISTANCE = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:cm|mm)\s+(?:above|below|from|superior to|inferior to|proximal to|distal to|beyond|past)\b",
    re.I,
)


# How far a device should be moved ("advance it by 3 to 4 cm", "pulling back 3 cm") is not a size either.
_MOVE = re.compile(
    r"\b(?:advanc|withdr[ae]w|retract|pull|push|reposition)\w*(?:\s+(?:it|back|out|in))?(?:\s+by)?"
    r"(?:\s+(?:about|approximately|approx|roughly))?\s+\d+(?:\.\d+)?(?:\s*(?:to|-)\s*\d+(?:\.\d+)?)?\s*(?:cm|mm)\b",
    re.I,
)


# A size the finding had before ("increased from 4.9 cm", "(previously 49 mm)", "1.0 cm on the prior") is its history,
# not its size now: "5.2 cm, increased from 4.9 cm" against "2.5 cm, increased from 4.9 cm" halves the mass.
NUMBER_UNIT = r"\d+(?:\.\d+)?(?:\s*(?:x|×|by)\s*\d+(?:\.\d+)?)*\s*(?:cm|mm)\b"  # a size, every dimension ("2 x 3 cm")
_PRIOR_SIZE = re.compile(
    r"\b(?:from|previously|formerly|compared (?:to|with))\s+(?:measuring\s+|measured\s+)?"
    rf"(?:(?:about|approximately|up to)\s+)?{NUMBER_UNIT}"
    rf"|\b{NUMBER_UNIT}\s+(?:(?:on|in|at)\s+(?:the\s+)?(?:prior|previous|earlier|last)|previously)\b",
    re.I,
)


def _sizes(text: str, device: bool = False) -> tuple[float, ...]:
    """Sizes in mm, now (not a prior size). A device's distance from a landmark ("4 cm above the carina") is its
    position, not a size, and how far a device should move is neither; a finding's own distance ("1.5 cm from the apex
    to the cupola", a pneumothorax) is a size."""
    if device:
        text = _DISTANCE.sub(" ", _MOVE.sub(" ", text))
    text = _PRIOR_SIZE.sub(" ", text)
    found = []
    for match in _SIZE.finditer(text):
        scale = 10.0 if match.group(4).lower() == "cm" else 1.0
        found.extend(float(v) * scale for v in match.group(1, 2, 3) if v)
    return tuple(found)


# A ratio or a percentage, as a percentage: "cardiothoracic ratio of 0.58" and "CTR 58%" (a heart 58% of the chest's
# width), "a 20% pneumothorax". A ratio is a decimal written after "ratio" or "ctr". The judge-pair builders edit
# these.
PERCENT = r"\b(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)"
RATIO = (
    r"\b(?:ratio|ctr)\b(?:\s*(?:of|is|was|measures|measuring|now|approximately|about|=|:))*\s*"
    r"(\d*\.\d+)\b(?!\s*(?:%|cm|mm))"
)
_PERCENT, _RATIO = re.compile(PERCENT, re.I), re.compile(RATIO, re.I)
HALF = 50.0  # a cardiothoracic ratio above 0.5 is cardiomegaly on a PA film


def _percents(text: str) -> tuple[float, ...]:
    """Each ratio or percentage of the finding, as a percentage, in the order written."""
    found = [(m.start(), float(m.group(1))) for m in _PERCENT.finditer(text)]
    found += [(m.start(), round(float(m.group(1)) * 100, 6)) for m in _RATIO.finditer(text) if float(m.group(1)) < 1.5]
    return tuple(value for _, value in sorted(found))


# The words that put a tip below (distal to) the carina: "1.5 cm beyond the carina" is in a mainstem bronchus.
_BELOW = ("below", "inferior to", "distal to", "beyond", "past")
_AT_CARINA = re.compile(r"\bat (?:the )?(?:level of (?:the )?)?carina\b")


# A distance the tip had before ("was 6 cm above the carina, now 2 cm above it", "5 cm above the carina on the prior
# study") is its history, not where it is now.
_PRIOR_AFTER = re.compile(r"\s*,?\s*(?:on (?:the )?(?:prior|previous|earlier)|previously|before)\b", re.I)
_PRIOR_WORD = re.compile(r"\b(?:was|previously|formerly|before|prior|earlier)\s+(?:approximately\s+|about\s+)?$", re.I)


def _carina(text: str) -> float | None:
    """A tip's signed distance above the carina in cm ("at the carina": 0), now: the first distance not given as a
    prior one."""
    found = list(_CARINA.finditer(text))
    now = [m for m in found if not _PRIOR_WORD.search(text[: m.start()]) and not _PRIOR_AFTER.match(text, m.end())]
    match = (now or found or [None])[0]
    if not match:
        return 0.0 if _AT_CARINA.search(text) else None
    value = float(match.group(1)) / (10.0 if match.group(2).lower() == "mm" else 1.0)
    return -value if match.group(3).lower() in _BELOW else value


# The words that join a description to the diagnosis it is read as.
_INTERPRETATION = re.compile(
    r"\b(?:consistent with|compatible with|in keeping with|suggestive of|suspicious for|concerning for|worrisome for|"
    r"representing|represents|likely|probable|probably|diagnostic of|characteristic of|typical of|due to|"
    r"secondary to|may represent|could represent|favou?ring)\b(.*)"
)


def _interpreted(text: str) -> frozenset[str]:
    """The diagnoses named after a word that reads a description as them ("haziness and Kerley B lines, consistent
    with pulmonary edema": edema)."""
    match = _INTERPRETATION.search(text)
    return _phrases(match.group(1), DIAGNOSES) if match else frozenset()


# A lobe's or a lung's collapse is its complete atelectasis; a vertebral body's collapse is not.
_LUNG_WORD = re.compile(r"\b(?:lobes?|lobar|lungs?|lingula|lingular|segments?|segmental|subsegmental)\b")
_SPINE_WORD = re.compile(r"\b(?:vertebra\w*|spine|spinal|thoracic body|compression)\b")


def _diagnoses(text: str) -> frozenset[str]:
    """The diagnoses named; the collapse of a lobe or a lung read as atelectasis."""
    found = _phrases(text, DIAGNOSES)
    if "collapse" in found and _LUNG_WORD.search(text) and not _SPINE_WORD.search(text):
        found = (found - {"collapse"}) | {"atelectasis"}
    return found


def _lobes(text: str) -> frozenset[str]:
    """The lobes named; the lingula is part of the left upper lobe, so "left upper lobe, lingular segment" names the
    lingula alone."""
    lobes = {LOBE_GROUPS.get(p, p) for p in _phrases(text, LOBES)}
    return frozenset(lobes - {"upper lobe"} if "lingula" in lobes else lobes)


# A place the finding spares is not where it is ("opacities in the right lower zone, sparing the right upper zone",
# "the right upper lobe is spared"), up to the next clause ("sparing the apices and involving the bases").
_SPARED = re.compile(
    r"(?<!without )(?<!no )\bspar(?:ing|es)\b(?: of)?.*?(?=\b(?:and|with|involving|but|while|most)\b|[,;.]|$)"
    r"|\b(?:the )?(?:(?:right|left) )?(?:upper|mid|middle|lower) (?:lobe|zone|lung)s? "
    r"(?:is|are) (?:relatively )?spared\b"
)
# Levels sharing one noun ("right mid and lower zones", "upper, mid and lower zones", "mid to lower zones"): each
# level with the noun, so each is read.
_LEVEL = r"(?:upper|middle|mid|lower)"
_SHARED_NOUN = re.compile(rf"\b({_LEVEL}(?:(?:, | and |, and | to ){_LEVEL})+) (zone|lung|lobe)s?\b")


def _each_level(found: re.Match) -> str:
    levels = re.findall(_LEVEL, found.group(1))
    return " and ".join(f"{level} {found.group(2)}" for level in levels)


# Where something is pushed is not where the finding is ("left pneumothorax with the mediastinum shifted to the right",
# "rightward tracheal deviation"), and a vein's or a limb's name is not a place in the lung ("superior vena cava",
# "right upper extremity PICC").
_SHIFTED = re.compile(
    r"\b(?:shift(?:ed|ing|s)?|deviat(?:ed|ion|ing|es)|displac(?:ed|ement|ing|es)|push(?:ed|ing|es)?)\s+"
    r"(?:[a-z]+\s+){0,5}?(?:to|toward|towards)\s+(?:the\s+)?(?:left|right)\b|\b(?:left|right)wards?\b"
)
_SIDE = re.compile(r"\b(?:left|right|bilateral|bilaterally|both|bibasilar)\b")
_NOT_A_LUNG_PLACE = re.compile(
    r"\b(?:superior|inferior) vena cava\b|\b(?:upper|lower) (?:extremity|extremities|limb|limbs)\b"
)


def unshifted(text: str) -> str:
    """The text without where it says something is pushed (`_SHIFTED`), when it names a side of its own besides; where
    the push is the finding ("mediastinal shift to the right", "tracheal deviation to the left"), its side stays."""
    without = _SHIFTED.sub(" ", text)
    return without if _SIDE.search(without) else text


def placed(text: str) -> str:
    """The (normalised, `unshifted`) text as its places are read: spared places and the names of veins and limbs
    dropped; levels sharing a noun each given it."""
    return _SHARED_NOUN.sub(_each_level, _SPARED.sub(" ", _NOT_A_LUNG_PLACE.sub(" ", text)))


def _sides(text: str) -> frozenset[str]:
    sides = set(_phrases(text, ("left", "right")))
    if re.search(r"\b(bilateral|bilaterally|both|bibasilar)\b", text):
        sides = {"bilateral"}
    return frozenset(sides)


@lru_cache(maxsize=65536)
def frame(finding: str) -> FindingFrame:
    """What one finding says about each attribute."""
    text = normalised(finding)
    device = bool(_phrases(text, DEVICES))
    hedged = _LESS_LIKELY_ALTERNATIVE.sub("or possibly", text)
    sided = unshifted(text)
    where = placed(sided)
    segments = _phrases(where, SEGMENTS)
    segment_words = frozenset() if segments else _phrases(where, SEGMENT_WORDS)
    return FindingFrame(
        sizes_mm=_sizes(text, device),
        percents=_percents(text),
        carina_cm=_carina(text) if device else None,
        device=device,
        device_kinds=device_kinds(text) if device else frozenset(),
        malpositions=_phrases(_GOOD_PLACE.sub(" ", text), MALPOSITIONS) if device else frozenset(),
        good_places=_places(text, GOOD_PLACES) if device else frozenset(),
        strong_hedges=_phrases(_INTENSIFIED.sub(" ", hedged), STRONG_HEDGES),
        weak_hedges=_phrases(text, WEAK_HEDGES) | frozenset(m.group(0) for m in _INTENSIFIED.finditer(text)),
        against_hedges=_phrases(_NO_DOUBT.sub(" ", hedged), AGAINST_HEDGES),
        definite=_phrases(text, DEFINITE),
        diagnoses=_diagnoses(text),
        vague=_phrases(text, VAGUE),
        interpreted=_interpreted(text),
        sides=_sides(where),
        lobes=_lobes(where),
        zones=frozenset(ZONE_GROUPS.get(p, p) for p in _phrases(_SEGMENT.sub(" ", where), ZONES)),
        segments=segments | segment_words,
        severities=rules.severities(text),
        severity_words=frozenset(w for w in re.findall(r"[a-z]+", text) if w in rules.SEVERITY_LEVELS),
        side_words=(len(re.findall(r"\bleft\b", sided)), len(re.findall(r"\bright\b", sided))),
        level=significance(finding),
        normal=rules.is_normal(text),
        changes=rules.change_directions(text),
        words=frozenset(w for w in re.findall(r"[a-z]+", text) if w not in _STOPWORDS),
    )


def _differ(a: frozenset, b: frozenset) -> float:
    """1 when both sides name something and the sets differ, else 0."""
    return float(bool(a) and bool(b) and a != b)


def _one_side(a: frozenset, b: frozenset) -> float:
    return float(bool(a) != bool(b))


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _size_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    both = bool(r.sizes_mm) and bool(c.sizes_mm)
    if not both:
        return [0.0, _one_side(frozenset(r.sizes_mm), frozenset(c.sizes_mm)), 0.0, 0.0, 0.0, 0.0]
    before, after = max(r.sizes_mm), max(c.sizes_mm)
    relative = abs(after - before) / max(before, 1e-6)
    # every dimension, largest first: "2.2 x 1.6 cm" against "2.2 x 1.1 cm" differs in the second
    pairs = zip(sorted(r.sizes_mm, reverse=True), sorted(c.sizes_mm, reverse=True))
    largest = max(abs(a - b) / max(a, 1e-6) for a, b in pairs)
    return [
        1.0,
        0.0,
        min(relative, 3.0),
        min(abs(after - before) / 10.0, 3.0),
        abs(math.log(after / before)),
        min(largest, 3.0),
    ]


def _percent_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    """The first ratio or percentage of each side: "CTR 0.45" against "CTR 0.65" (a normal heart made enlarged)."""
    if not (r.percents and c.percents):
        return [0.0, _one_side(frozenset(r.percents), frozenset(c.percents)), 0.0, 0.0, 0.0]
    before, after = r.percents[0], c.percents[0]
    return [
        1.0,
        0.0,
        min(abs(after - before) / 10.0, 3.0),
        min(abs(math.log(max(after, 0.1) / max(before, 0.1))), 3.0),
        float((before > HALF) != (after > HALF)),  # a cardiothoracic ratio across 0.5: cardiomegaly or not
    ]


def _carina_in_range(f: FindingFrame) -> bool:
    """A tip 2-7 cm above the carina: where an endotracheal tube belongs."""
    return f.carina_cm is not None and 2.0 <= f.carina_cm <= 7.0


def tip_misplaced(f: FindingFrame) -> bool:
    """A tip the finding places badly: a malposition it names, or a distance from the carina outside 2-7 cm."""
    return bool(f.malpositions) or (f.carina_cm is not None and not _carina_in_range(f))


def tip_placed(f: FindingFrame) -> bool:
    """A tip the finding places: by a landmark, good or bad, or by its distance from the carina."""
    return bool(f.malpositions or f.good_places) or f.carina_cm is not None


def _device_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    both = r.carina_cm is not None and c.carina_cm is not None
    distance = abs(r.carina_cm - c.carina_cm) if both else 0.0
    ok_r, ok_c = float(_carina_in_range(r)), float(_carina_in_range(c))
    placed = tip_placed(r) and tip_placed(c)
    return [
        float(r.device),
        float(c.device),
        float(both),
        min(distance, 10.0) / 5.0,
        float(both and ok_r != ok_c),
        float(bool(r.malpositions)),
        float(bool(c.malpositions)),
        float(bool(c.malpositions - r.malpositions)),
        float(bool(r.malpositions - c.malpositions)),
        float(bool(r.good_places)),
        float(bool(c.good_places)),
        _differ(r.malpositions | r.good_places, c.malpositions | c.good_places),
        float(tip_misplaced(r)),
        float(tip_misplaced(c)),
        float(placed and tip_misplaced(r) != tip_misplaced(c)),
        float(bool(r.device_kinds & c.device_kinds)),
        float(bool(r.device_kinds) and bool(c.device_kinds) and not r.device_kinds & c.device_kinds),
    ]


AGAINST = 3  # hedge_level of a hedge that leans against the diagnosis ("unlikely")


def hedge_level(f: FindingFrame) -> int:
    """3 for a hedge against ("unlikely"), 2 for a strong hedge ("possible"), 1 for a weak one ("likely", "highly
    suspicious for"), 0 for none."""
    return AGAINST if f.against_hedges else 2 if f.strong_hedges else 1 if f.weak_hedges else 0


def strongly_hedged(f: FindingFrame) -> bool:
    """A hedge of "possibly" or stronger doubt as written, emphatic ("highly suspicious for") or leaning against
    ("unlikely") included: the statements the extractor keeps as hedged findings."""
    return bool(f.strong_hedges or f.against_hedges or any(_INTENSIFIED.fullmatch(w) for w in f.weak_hedges))


def hedge_step_matters(before: int, after: int) -> bool:
    """Whether a change of hedge level (hedge_level) is a large step on the taught scale: a definite finding made
    "possibly" or doubted, a definite or probable one denied by a hedge against it, or the reverse. A step to a
    neighbouring level ("pneumonia" against "likely pneumonia") is not."""
    low, high = sorted((before, after))
    return (low == 0 and high >= 2) or (low <= 1 and high == AGAINST)


def _certainty_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    hedges_r = r.strong_hedges | r.weak_hedges | r.against_hedges
    hedges_c = c.strong_hedges | c.weak_hedges | c.against_hedges
    return [
        float(bool(r.strong_hedges)),
        float(bool(c.strong_hedges)),
        float(bool(r.weak_hedges)),
        float(bool(c.weak_hedges)),
        float(bool(r.against_hedges)),
        float(bool(c.against_hedges)),
        float(bool(r.definite)),
        float(bool(c.definite)),
        abs(hedge_level(r) - hedge_level(c)) / float(AGAINST),
        _differ(hedges_r, hedges_c) + _one_side(hedges_r, hedges_c),
        float(hedge_step_matters(hedge_level(r), hedge_level(c))),
    ]


# The vaguer descriptions that stand for a diagnosis (canonical forms; the builders' SPECIFIC_TO_VAGUE, in the frame's
# words). A diagnosis not listed may stand behind any vaguer description.
VAGUE_FORMS = {
    "pneumonia": frozenset({"opacity", "opacification", "airspace disease", "infiltrate", "density"}),
    "consolidation": frozenset({"opacity", "opacification", "density", "airspace disease", "infiltrate"}),
    "atelectasis": frozenset({"opacity", "opacification", "density"}),
    "edema": frozenset({"interstitial markings", "markings", "vascular congestion", "congestion", "opacity"}),
    "heart failure": frozenset({"interstitial markings", "markings", "vascular congestion", "congestion"}),
    "mass": frozenset({"opacity", "density", "lesion", "abnormality"}),
    "neoplasm": frozenset({"opacity", "density", "lesion", "abnormality"}),
    "malignancy": frozenset({"opacity", "density", "lesion", "abnormality"}),
    "carcinoma": frozenset({"opacity", "density", "lesion", "abnormality"}),
    "tumor": frozenset({"opacity", "density", "lesion", "abnormality"}),
    "metastasis": frozenset({"opacity", "density", "lesion"}),
    "emphysema": frozenset({"hyperinflation", "hyperexpanded"}),
    "cardiomegaly": frozenset({"prominent"}),
    "effusion": frozenset({"blunting", "opacity", "opacification"}),
    "fracture": frozenset({"deformity", "irregularity", "abnormality"}),
    "hiatal hernia": frozenset({"density", "opacity", "lesion"}),
    "lymphadenopathy": frozenset({"fullness", "prominent"}),
    "scarring": frozenset({"opacity", "density", "markings", "changes"}),
    "fibrosis": frozenset({"opacity", "markings", "changes"}),
    "pneumoperitoneum": frozenset({"lucency"}),
    "pneumomediastinum": frozenset({"lucency"}),
    "pneumothorax": frozenset({"lucency"}),
}


# Diagnoses that qualify another, with the one they qualify: "tension pneumothorax" made "pneumothorax" is vaguer,
# not a finding fewer; "tension pneumothorax" made "cardiomegaly" is not.
QUALIFIERS = {"tension": "pneumothorax"}


def _made_vague(specific: FindingFrame, vaguer: FindingFrame) -> float:
    """1 when a diagnosis of `specific` is missing from `vaguer` and something stands in its place: a vaguer
    description of it ("opacity, consistent with pneumonia" -> "opacity") or another diagnosis, or the interpretation
    dropped ("Kerley B lines, consistent with edema" -> "Kerley B lines"), or a qualifier dropped from a diagnosis
    that stays ("tension pneumothorax" -> "pneumothorax": `QUALIFIERS`). A diagnosis simply absent ("Cardiomegaly
    with vascular congestion" -> "vascular congestion") is a finding fewer, not a vaguer one."""
    dropped = specific.diagnoses - vaguer.diagnoses
    if not dropped:
        return 0.0
    if (
        vaguer.diagnoses - specific.diagnoses
        or dropped & specific.interpreted
        or any(QUALIFIERS.get(d) in vaguer.diagnoses for d in dropped)
    ):
        return 1.0
    return float(any(vaguer.vague & VAGUE_FORMS.get(d, vaguer.vague) for d in dropped))


def _specificity_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    differ = float(r.diagnoses != c.diagnoses)  # a description dropped or added matters where a diagnosis changes
    return [
        float(len(r.diagnoses - c.diagnoses)),
        float(len(c.diagnoses - r.diagnoses)),
        float(len(r.vague - c.vague)) * differ,
        float(len(c.vague - r.vague)) * differ,
        _made_vague(r, c),
        _made_vague(c, r),
        _jaccard(r.diagnoses, c.diagnoses),
    ]


def _place_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    lateral = {"left", "right"}
    swapped = bool(r.sides & lateral) and bool(c.sides & lateral) and (r.sides & lateral) != (c.sides & lateral)
    return [
        float(swapped),
        float(r.side_words != c.side_words and sum(r.side_words) == sum(c.side_words) > 0),
        _differ(r.sides, c.sides),
        _one_side(r.sides, c.sides),
        _differ(r.lobes, c.lobes),
        _one_side(r.lobes, c.lobes),
        _differ(r.zones, c.zones),
        _one_side(r.zones, c.zones),
        _differ(r.segments, c.segments),
        _one_side(r.segments, c.segments),
    ]


def _other_features(r: FindingFrame, c: FindingFrame) -> list[float]:
    levels_r, levels_c = r.severities, c.severities
    severity_gap = abs(max(levels_r) - max(levels_c)) / 2.0 if levels_r and levels_c else 0.0
    return [
        _differ(levels_r, levels_c),
        _differ(r.severity_words, c.severity_words),
        severity_gap,
        _one_side(levels_r, levels_c),
        float(r.normal),
        float(c.normal),
        float(r.normal != c.normal),
        float(bool(r.changes) and bool(c.changes) and not r.changes & c.changes),
        _one_side(r.changes, c.changes),
        _jaccard(r.words, c.words),
        *(float(r.level == level) for level in LEVELS),
        *(float(c.level == level) for level in LEVELS),
    ]


FEATURE_NAMES = (
    *("size_both", "size_one_side", "size_relative_change", "size_difference_cm", "size_log_ratio"),
    "size_any_dimension_change",
    *("percent_both", "percent_one_side", "percent_difference_tens", "percent_log_ratio", "percent_across_half"),
    *("device_reference", "device_candidate", "carina_both", "carina_distance", "carina_range_changed"),
    *("malposition_reference", "malposition_candidate", "malposition_added", "malposition_removed"),
    *("good_place_reference", "good_place_candidate", "tip_places_differ"),
    *("tip_misplaced_reference", "tip_misplaced_candidate", "tip_misplacement_differs"),
    *("device_kind_shared", "device_kinds_disjoint"),
    *("strong_hedge_reference", "strong_hedge_candidate", "weak_hedge_reference", "weak_hedge_candidate"),
    *("against_hedge_reference", "against_hedge_candidate"),
    *("definite_reference", "definite_candidate", "hedge_level_gap", "hedges_differ", "hedge_step_large"),
    *("diagnoses_dropped", "diagnoses_added", "vague_dropped", "vague_added", "diagnosis_made_vague"),
    *("description_made_diagnosis", "diagnoses_jaccard"),
    *(
        "sides_swapped",
        "side_words_swapped",
        "sides_differ",
        "side_one_side",
        "lobes_differ",
        "lobe_one_side",
        "zones_differ",
    ),
    *("zone_one_side", "segments_differ", "segment_one_side"),
    *(
        "severities_differ",
        "severity_words_differ",
        "severity_gap",
        "severity_one_side",
        "normal_reference",
        "normal_candidate",
    ),
    *("polarity_differs", "change_reversed", "change_one_side", "words_jaccard"),
    *(f"reference_{level}" for level in LEVELS),
    *(f"candidate_{level}" for level in LEVELS),
    "cosine",
)


def pair_features(reference: str, candidate: str, cosine: float) -> list[float]:
    """The FEATURE_NAMES of one (reference finding, candidate finding) pair whose embeddings' cosine is `cosine`."""
    r, c = frame(reference), frame(candidate)
    return [
        *_size_features(r, c),
        *_percent_features(r, c),
        *_device_features(r, c),
        *_certainty_features(r, c),
        *_specificity_features(r, c),
        *_place_features(r, c),
        *_other_features(r, c),
        float(cosine),
    ]
