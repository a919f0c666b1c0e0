"""Building blocks of a metric's `display_detail`: what report.html shows of one pair's detail.

A display is a dict of parts that the page draws in this order, whatever the metric:
- "notes": lines of text;
- "entities": {"reference": [[text, label, matched]], "candidate": [...]}, drawn as chips, green when matched;
- "tables": [{"caption", "columns", "rows"}];
- "texts": [{"caption", "text"}], drawn as preformatted blocks.
Texts are cut at `MAX_TEXT` characters so that a page of 10,000 pairs stays small.
"""

from __future__ import annotations

import json

from ..files.json_io import strict

MAX_TEXT = 2000


def cut(text) -> str:
    text = text if isinstance(text, str) else json.dumps(text)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " …"


def matched_entities(mine: list[tuple[str, str]], theirs: list[tuple[str, str]]) -> list[list]:
    """[text, label, matched]: an entity is matched when the other report has one with the same text and label."""
    other = set(map(tuple, theirs))
    return [[text, label, (text, label) in other] for text, label in mine]


def entity_display(reference: list[tuple[str, str]], candidate: list[tuple[str, str]]) -> dict:
    return {
        "notes": ["entities (green: also in the other report with the same label; red: not)"],
        "entities": {
            "reference": matched_entities(reference, candidate),
            "candidate": matched_entities(candidate, reference),
        },
    }


def table(caption: str, columns: list[str], rows: list[list]) -> dict:
    return {"caption": caption, "columns": columns, "rows": rows}


def json_detail(detail: dict) -> dict:
    """The detail as indented JSON, cut: for metrics that declare no display of their own."""
    return {"texts": [{"caption": "", "text": cut(json.dumps(strict(detail), indent=1, default=str))}]}
