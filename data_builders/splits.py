"""Deterministic splits keyed by report id, so everything derived from one report lands in one split."""

from __future__ import annotations

import hashlib

SPLITS = ("train", "validation", "test")
_ALIASES = {"train": "train", "training": "train", "valid": "validation", "val": "validation",
            "validation": "validation", "dev": "validation", "test": "test"}


def normalise_split_name(name: str) -> str:
    try:
        return _ALIASES[str(name).strip().lower()]
    except KeyError:
        raise ValueError(f"unknown split name {name!r}; expected one of {sorted(_ALIASES)}") from None


def hash_split(key: str, ratios: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 0) -> str:
    """Split assignment from a stable hash of (seed, key): same key, same split, on every machine."""
    if len(ratios) != 3 or any(r < 0 for r in ratios) or abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError(f"split ratios must be three non-negative numbers summing to 1, got {ratios}")
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < ratios[0]:
        return "train"
    return "validation" if u < ratios[0] + ratios[1] else "test"
