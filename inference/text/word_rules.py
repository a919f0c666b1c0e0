"""The semantic GREEN teacher's word rules: which statements are normal, which name an abnormality, and which words
give a finding's location, severity or a comparison with a prior study.

Every rule and list here was chosen on RadPref's development half alone (100 candidate reports, three radiologists;
`radmetrics meta-eval radpref`), against the radiologists' mean error count, by Kendall tau-b of minus the teacher's
significant error count, one rule at a time from the full set (benchmarks/results/semantic_green_radpref_dev.json):

| rule                                                                  | tau-b with it | without it |
|-----------------------------------------------------------------------|---------------|------------|
| an unmatched statement is significant only if it names an abnormality | 0.731         | 0.668      |
| an unmatched normal statement is insignificant                        | 0.731         | 0.535      |
| a matched pair whose polarity differs is a significant error          | 0.731         | 0.716      |
| a matched pair whose locations differ is a significant (c) error      | 0.731         | 0.707      |
| a matched pair whose severities differ is a (d) error                 | 0.731         | 0.731      |

`python benchmarks/green/semantic_green_radpref.py` reproduces the table. In the prototype that preceded it, replacing
the lexicon by the CheXpert-style rule labeler for significance gave 0.634, and taking polarity from the lexicon
instead of
the cue list 0.711: both are worse, and neither is kept.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .entity_lexicon import find_atoms
from .negation import BASIC_NEGATIONS
from .sentences import tokenize

# A statement is normal (a negative or normal finding) when it holds one of these cues as whole words.
NORMAL_CUES = (
    *BASIC_NEGATIONS,
    "absent",
    "none",
    "resolved",
    "clear",
    "normal",
    "unremarkable",
    "within normal limits",
    "intact",
)
_NORMAL = re.compile(
    r"\b(" + "|".join(re.escape(c) for c in sorted(NORMAL_CUES, key=len, reverse=True)) + r")\b", re.I
)

# Location words and the side or zone each names; two matched findings whose sets differ are in different places.
LOCATION_GROUPS = {
    "left": ("left",),
    "right": ("right",),
    "bilateral": ("bilateral",),
    "bilaterally": ("bilateral",),
    "both": ("bilateral",),
    "bibasilar": ("bilateral", "lower"),
    "upper": ("upper",),
    "apex": ("upper",),
    "apices": ("upper",),
    "apical": ("upper",),
    "lower": ("lower",),
    "base": ("lower",),
    "bases": ("lower",),
    "basilar": ("lower",),
    "basal": ("lower",),
    "middle": ("middle",),
    "lingula": ("lingula",),
    "lingular": ("lingula",),
    "retrocardiac": ("retrocardiac",),
    "perihilar": ("perihilar",),
}

# Severity and size words by level. On RadPref's development half no matched pair named two different levels, so the
# (d) rule rests on GREEN's definition alone: a different level on both sides is significant, a level on one side only
# insignificant.
SEVERITY_LEVELS = {
    "trace": 1,
    "tiny": 1,
    "minimal": 1,
    "mild": 1,
    "mildly": 1,
    "small": 1,
    "slight": 1,
    "slightly": 1,
    "moderate": 2,
    "moderately": 2,
    "severe": 3,
    "severely": 3,
    "large": 3,
    "marked": 3,
    "markedly": 3,
    "extensive": 3,
    "massive": 3,
}

# A statement about a prior study. RadPref labels no comparison, so (e) and (f) rest on these words alone, and only for
# statements that name no abnormality ("Stable left effusion" is a finding first).
_COMPARISON = re.compile(
    r"\b(compared (?:to|with)|comparison|prior|previous|interval|since|unchanged|stable|"
    r"again (?:seen|noted)|redemonstrat\w*|persistent)\b",
    re.I,
)


# Interval change words by direction: two matched findings whose directions differ ("increased" against "decreased",
# "new" against "improved", "stable" against "enlarging") disagree on the change since the prior study.
CHANGE_DIRECTIONS = {
    "increased": "up",
    "increase": "up",
    "increasing": "up",
    "enlarging": "up",
    "worse": "up",
    "worsened": "up",
    "worsening": "up",
    "progressed": "up",
    "progression": "up",
    "progressive": "up",
    "new": "up",
    "newly": "up",
    "developing": "up",
    "decreased": "down",
    "decrease": "down",
    "decreasing": "down",
    "improved": "down",
    "improving": "down",
    "improvement": "down",
    "smaller": "down",
    "resolving": "down",
    "diminished": "down",
    "stable": "same",
    "unchanged": "same",
    "persistent": "same",
}


def change_directions(statement: str) -> frozenset[str]:
    return frozenset(CHANGE_DIRECTIONS[w] for w in _words(statement) if w in CHANGE_DIRECTIONS)


def is_normal(statement: str) -> bool:
    return bool(_NORMAL.search(statement))


@lru_cache(maxsize=65536)
def names_abnormality(statement: str) -> bool:
    """The entity lexicon finds an abnormality or disease in the statement that is present or uncertain, not negated.
    This is what keeps "The patient is a 72-year-old male" from counting as a significant false finding."""
    return any(
        atom.kind in ("abnormality", "disease") and atom.status != "absent" for atom in find_atoms(tokenize(statement))
    )


def is_significant_alone(statement: str) -> bool:
    """An unmatched statement is a significant error when it is not normal and names an abnormality."""
    return not is_normal(statement) and names_abnormality(statement)


def is_comparison(statement: str) -> bool:
    return bool(_COMPARISON.search(statement))


def _words(statement: str) -> list[str]:
    return re.findall(r"[a-z]+", statement.lower())


def locations(statement: str) -> frozenset[str]:
    return frozenset(g for w in _words(statement) for g in LOCATION_GROUPS.get(w, ()))


def severities(statement: str) -> frozenset[int]:
    return frozenset(SEVERITY_LEVELS[w] for w in _words(statement) if w in SEVERITY_LEVELS)
