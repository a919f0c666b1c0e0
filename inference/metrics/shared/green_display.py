"""How report.html shows a GREEN answer: its six categories' counts, the matched count and the answer's text (GREEN
and the semantic GREEN teacher both answer in GREEN's format)."""

from __future__ import annotations

from ..display import table
from .green_format import CATEGORIES


def green_display(significant, insignificant, matched, texts: list[dict]) -> dict:
    """GREEN's six categories with their significant and insignificant counts, the matched count and the answer."""
    rows = [
        [f"({letter}) {text}", sig, insig]
        for (letter, text), sig, insig in zip(CATEGORIES.items(), significant or [0] * 6, insignificant or [0] * 6)
    ]
    return {
        "notes": [f"matched findings: {matched}"],
        "tables": [table("errors by category", ["category", "significant", "insignificant"], rows)],
        "texts": texts,
    }
