"""Deterministic splits keyed by normalised report text, so identical reports (and everything derived
from them) land in one split.

Normalisation (`normalise_report_text`), the one definition of "the same report" or "the same sentence":
- lower-case;
- every character other than a-z and 0-9 becomes a space, so punctuation and hyphenation do not matter
  ("x-ray" = "x ray") while numbers stay apart ("2.5 cm" -> "2 5 cm", not "25 cm");
- IU X-ray's de-identification token XXXX counts as one placeholder word wherever it stands ("x-XXXX",
  "XXXXPM", "4XXXX") and a run of placeholders counts as one, since how many words were redacted is noise;
- whitespace collapsed.
"""

from __future__ import annotations

import hashlib
import re

SPLITS = ("train", "validation", "test")
_ALIASES = {
    "train": "train",
    "training": "train",
    "valid": "validation",
    "val": "validation",
    "validation": "validation",
    "dev": "validation",
    "test": "test",
}
NORMALISATION = "lower-case, punctuation dropped, each run of XXXX one placeholder word, whitespace collapsed"
PLACEHOLDER = "xxxx"
_PLACEHOLDER_RUN = re.compile(r"x{4,}")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_REPEATED_PLACEHOLDER = re.compile(rf"\b{PLACEHOLDER}(?: {PLACEHOLDER})+\b")


def normalise_split_name(name: str) -> str:
    try:
        return _ALIASES[str(name).strip().lower()]
    except KeyError:
        raise ValueError(f"unknown split name {name!r}; expected one of {sorted(_ALIASES)}") from None


def normalise_report_text(text: str) -> str:
    """Lower-case words and numbers with punctuation dropped and XXXX runs as one placeholder (module docstring)."""
    text = _PLACEHOLDER_RUN.sub(f" {PLACEHOLDER} ", text.lower())
    words = " ".join(_NOT_ALPHANUMERIC.sub(" ", text).split())
    return _REPEATED_PLACEHOLDER.sub(PLACEHOLDER, words)


def hash_split(key: str, ratios: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 0) -> str:
    """Split assignment from a stable hash of (seed, key): same key, same split, on every machine."""
    if len(ratios) != 3 or any(r < 0 for r in ratios) or abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError(f"split ratios must be three non-negative numbers summing to 1, got {ratios}")
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < ratios[0]:
        return "train"
    return "validation" if u < ratios[0] + ratios[1] else "test"


def text_split(text: str, ratios: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 0) -> str:
    """The split of every report whose normalised text is that of `text`."""
    return hash_split(normalise_report_text(text), ratios, seed)
