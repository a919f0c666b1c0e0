"""The clinical significance of a finding, on CRIMSON's four levels (crimson-score 0.2.0's prompt: urgent, actionable
not urgent, not actionable not urgent, benign/expected), by word rules written from CRIMSON's own examples of each
level (its SIGNIFICANCE_EXAMPLES and CONTEXT_GUIDELINES) and chosen on RadPref's 30 development cases, never on the 20
frozen ones (`radmetrics meta-eval significance` measures them against the radiologists).

A finding takes the highest level any of its terms names: "consolidation versus atelectasis" is actionable, as an
unexplained consolidation would be. Modifiers lower a term: a small or trace pneumothorax is actionable rather than
urgent, a trace or improving effusion not actionable, a healed or chronic fracture not actionable. The patient's age
moves age-related changes (atherosclerotic calcification, tortuosity, degenerative spine changes) to benign/expected at
65 or older, as CRIMSON's context guidelines do. A finding no term names gets `DEFAULT`.
`weight(level)` is CRIMSON's weight of an error on a finding of that level (urgent 1, actionable 0.5, not actionable
0.25, benign 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

LEVELS = ("benign_expected", "not_actionable_not_urgent", "actionable_not_urgent", "urgent")  # in rising order
WEIGHTS = {"urgent": 1.0, "actionable_not_urgent": 0.5, "not_actionable_not_urgent": 0.25, "benign_expected": 0.0}
DEFAULT = "actionable_not_urgent"
ELDERLY_AGE = 65

URGENT = (
    r"tension|pneumomediastinum|pneumoperitoneum|free (intraperitoneal )?air|subdiaphragmatic (free )?air|"
    r"mediastinal widening|widened mediastinum|foreign bod(y|ies)|aortic dissection|"
    r"mal-?position\w*|misplaced|in the right (main ?stem )?bronchus|right mainstem|"
    r"large pericardial effusion|pericardial tamponade|pneumothora(x|ces)"
)
ACTIONABLE = (
    r"consolidat\w*|pneumonia|infiltrat\w*|airspace|air-space|opacit\w*|aeration disturbance|edema|oedema|"
    r"congesti\w*|effusions?|cardiomegaly|enlarged (cardiac|heart|cardiomediastinal)|cardiac enlargement|"
    r"nodul\w*|mass(es)?|lesions?|fractures?|adenopathy|lymphadenopathy|bronchiectasis|volume loss|collapse|"
    r"mediastinal shift|shift of the mediastinum|bronchitic|bronchial wall thickening|interstitial|abscess|"
    r"cavit\w*|aneurysm|hydropneumothorax|hemothorax|obstruct\w*"
)
NOT_ACTIONABLE = (
    r"atelecta\w*|scar\w*|fibro\w*|pleural thickening|osteopeni\w*|granuloma\w*|low lung volumes?|"
    r"hypoinflat\w*|hyperinflat\w*|hyperexpan\w*|emphysema\w*|copd|bull(a|ae|ous)|hiatal hernia|"
    r"elevat\w* (of the )?(right |left )?hemidiaphragm|hemidiaphragm\w* (is |are )?elevat\w*|"
    r"catheter|tube|line\b|lines\b|picc|port\b|pacemaker|pacer|leads?\b|wires?|sternotomy|clips?|stent|"
    r"prosthe\w*|hardware|valve replacement|drain\b|vascular markings|vascular prominence|degenerative|spondyl\w*|"
    r"kyphosis|scoliosis|calcif\w*|tortuo\w*|unfold\w*|atheroscl\w*|healing|healed|old|deformit\w*|"
    r"post-?surgical|post-?operative|(suboptimal|shallow|poor) (inspirat\w*|inspiration|effort)"
)
BENIGN = (
    r"gastric (air|bubble)|bowel gas|vertebral augmentation|kyphoplasty|vertebroplasty|calcified granuloma\w*|"
    r"healed (rib )?fractures?|old (healed )?(rib )?fractures?"
)
AGE_RELATED = (
    r"atheroscl\w*|(aortic|vascular|arterial|aortic knob|arch) calcif\w*|calcif\w* (of the )?aort\w*|tortuo\w*|"
    r"unfold\w*|degenerative|spondyl\w*|osteophyt\w*"
)
SMALL = r"\b(small|trace|tiny|minimal|minute|apical small)\b"
CHRONIC = r"\b(healed|healing|old|chronic|remote|stable)\b"
IMPROVING = r"\b(decreas\w*|improv\w*|resolv\w*|smaller)\b"

_URGENT, _ACTIONABLE, _NOT_ACTIONABLE, _BENIGN, _AGE = (
    re.compile(rf"\b({p})", re.I) for p in (URGENT, ACTIONABLE, NOT_ACTIONABLE, BENIGN, AGE_RELATED)
)
_SMALL, _CHRONIC, _IMPROVING = re.compile(SMALL, re.I), re.compile(CHRONIC, re.I), re.compile(IMPROVING, re.I)
_DEVICE_OK = re.compile(r"\b(catheter|tube|line|picc|port|pacemaker|pacer|leads?|wires?|drain|stent)\b", re.I)


def age_of(context: Mapping | None) -> int | None:
    """The patient's age in years from a context's age field ("072Y", "72", "72 years"), else None."""
    for key, value in (context or {}).items():
        if "age" in str(key).lower():
            found = re.match(r"\s*0*(\d{1,3})\s*(y|yr|years?)?\b", str(value), re.I)
            if found:
                return int(found.group(1))
    return None


def significance(finding: str, context: Mapping | None = None) -> str:
    """The finding's level (one of LEVELS)."""
    age = age_of(context)
    levels = []
    for match in _URGENT.finditer(finding):
        term = match.group(0).lower()
        if term.startswith("pneumothora") and _SMALL.search(finding):
            levels.append("actionable_not_urgent")
        else:
            levels.append("urgent")
    for match in _ACTIONABLE.finditer(finding):
        term = match.group(0).lower()
        if term.startswith("effusion") and re.search(r"\b(trace|tiny|minimal)\b", finding, re.I):
            levels.append("not_actionable_not_urgent")
        elif term.startswith(("fracture", "deformit")) and _CHRONIC.search(finding):
            levels.append("not_actionable_not_urgent")
        elif term.startswith("effusion") and _IMPROVING.search(finding):
            levels.append("not_actionable_not_urgent")
        else:
            levels.append("actionable_not_urgent")
    if _BENIGN.search(finding):
        levels.append("benign_expected")
    if _AGE.search(finding):
        levels.append("benign_expected" if age is not None and age >= ELDERLY_AGE else "not_actionable_not_urgent")
    if _NOT_ACTIONABLE.search(finding) and not (_AGE.search(finding) or _BENIGN.search(finding)):
        levels.append("not_actionable_not_urgent")
    if not levels:
        return DEFAULT
    return max(levels, key=LEVELS.index)


_NAMED = re.compile(rf"\b({URGENT}|{ACTIONABLE}|{NOT_ACTIONABLE})", re.I)
_AGE_WORDS = re.compile(r"\b\d+[- ]?(?:years?|yrs?|months?|weeks?|days?)[- ]old\b", re.I)


def names_term(finding: str) -> bool:
    """Whether the finding names a term of an urgent, actionable or not-actionable level (a benign one or none does
    not count): "airspace disease", "osteopenic", "Port-A-Cath" and "drain" among them, which the entity lexicon
    (text/word_rules.py `names_abnormality`) misses. A patient's age ("72-year-old") is not the term "old"."""
    return bool(_NAMED.search(_AGE_WORDS.sub(" ", finding)))


def weight(level: str) -> float:
    return WEIGHTS[level]
