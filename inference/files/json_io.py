"""Strict JSON out: NaN and infinities (a value that does not exist) are written as null, never as the bare `NaN` that
jq, JavaScript and strict parsers refuse."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import atomic


def strict(value):
    """`value` with every non-finite float (numpy's too) replaced by None, numpy scalars and arrays made plain."""
    if isinstance(value, dict):
        return {key: strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [strict(item) for item in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def dumps(value, **kwargs) -> str:
    """json.dumps of `strict(value)`; refuses what is still not JSON instead of writing it."""
    return json.dumps(strict(value), allow_nan=False, **kwargs)


def write_json(path, value) -> None:
    """`dumps(value, indent=2)` into `path`, its folder made first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, dumps(value, indent=2))
