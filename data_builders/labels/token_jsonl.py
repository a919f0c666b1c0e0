"""Token labels as JSONL, one sentence or report per line, in one of three forms:

    {"id": "r1#0", "report_id": "r1", "tokens": ["No", "effusion", "."], "ner_tags": ["O", "B-NON-ABNORMALITY", "O"]}
    {"id": "r1#0", "report_id": "r1", "tokens": ["No", "effusion", "."], "spans": [[1, 1, "NON-ABNORMALITY"]]}
    {"id": "r2", "text": "Small left effusion.", "spans": [[0, 19, "ABNORMALITY"]]}

`tags` may stand for `ner_tags` and `entities` for `spans`; token spans end inclusive (PURE), character spans end
exclusive (Python slicing) and must start and end on a word of `text` as the scorer splits it (`tokenize`). `id`
defaults to FILE:LINE, `report_id` to `id`, and an optional `split` (train / validation / test) places the record.
"""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.data_builders.corpus.splits import normalise_split_name
from radmetrics.inference.files.atomic import atomic_write

from .problems import Problems
from .token_records import (
    char_span_to_tokens,
    ner_record,
    span_problem,
    spans_to_tags,
    tag_problem,
    tags_to_spans,
    token_offsets,
)


def _spans(raw) -> list[list] | None:
    """[[start, end, label]] or [{"start", "end", "label"}] -> [[start, end, label]], None when neither."""
    if not isinstance(raw, list):
        return None
    spans = []
    for item in raw:
        if isinstance(item, dict) and {"start", "end", "label"} <= set(item):
            item = [item["start"], item["end"], item["label"]]
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], str)):
            return None
        if not (isinstance(item[0], int) and isinstance(item[1], int)):
            return None
        spans.append(list(item))
    return spans


def _is_tag(tag) -> bool:
    return isinstance(tag, str) and tag_problem(tag) is None


def _from_tokens(row: dict) -> tuple[list[str], list[list]] | str:
    tokens, tags = row["tokens"], row.get("ner_tags", row.get("tags"))
    if not (isinstance(tokens, list) and all(isinstance(t, str) and t for t in tokens)):
        return "'tokens' must be a list of non-empty strings"
    if tags is not None:
        if not isinstance(tags, list) or len(tags) != len(tokens):
            return f"'ner_tags' must list one tag per token ({len(tokens)} tokens)"
        bad = next((tag_problem(str(t)) or f"tag {t!r} is not a string" for t in tags if not _is_tag(t)), None)
        return bad or (tokens, tags_to_spans(tags))
    spans = _spans(row.get("spans", row.get("entities")))
    if spans is None:
        return "give 'ner_tags' or 'spans' [[start, end, label], ...] beside 'tokens'"
    return span_problem(spans, len(tokens)) or (tokens, spans)


def _from_text(row: dict) -> tuple[list[str], list[list]] | tuple[str, str]:
    text, spans = row["text"], _spans(row.get("spans", row.get("entities")))
    if not isinstance(text, str) or spans is None:
        return "'text' must be a string and 'spans' a list of [start, end, label] character spans", "malformed"
    tokens, offsets = token_offsets(text)
    token_spans = []
    for start, end, label in spans:
        found = char_span_to_tokens(offsets, start, end)
        if found is None:
            return f"span [{start}, {end}, {label!r}] ({text[start:end]!r}) does not fall on word boundaries", (
                "off_token_boundary"
            )
        token_spans.append([*found, label])
    return span_problem(token_spans, len(tokens)) or (tokens, token_spans), "malformed"


def _record(path: Path, number: int, row: dict, problems: Problems) -> dict | None:
    if not isinstance(row, dict) or ("tokens" not in row and "text" not in row):
        problems.add(path, number, "a record needs 'tokens' (with 'ner_tags' or 'spans') or 'text' with 'spans'")
        return None
    found, kind = (_from_tokens(row), "malformed") if "tokens" in row else _from_text(row)
    if isinstance(found, str):
        problems.add(path, number, found, kind)
        return None
    tokens, spans = found
    if not tokens:
        problems.add(path, number, "the record has no tokens", "empty_document")
        return None
    try:
        split = normalise_split_name(row["split"]) if row.get("split") else None
    except ValueError as exc:
        problems.add(path, number, str(exc))
        return None
    record_id = str(row.get("id", f"{path.name}:{number}"))
    record = ner_record(record_id, str(row.get("report_id", record_id)), tokens, spans, split)
    record["_source"] = (str(path), number)
    return record


def read_token_jsonl(path: str | Path, problems: Problems) -> list[dict]:
    """NER records (token_records.py) from a token-label JSONL file; bad lines go to `problems`."""
    path, records = Path(path), []
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(path, number, f"not JSON ({exc.msg})")
                continue
            record = _record(path, number, row, problems)
            if record:
                records.append(record)
    return records


def write_token_jsonl(records: list[dict], path: str | Path, form: str = "tags") -> None:
    """NER records -> JSONL: form 'tags' (tokens + ner_tags), 'spans' (tokens + token spans) or 'text' (the tokens
    joined by spaces + character spans)."""
    if form not in ("tags", "spans", "text"):
        raise ValueError(f"unknown token JSONL form {form!r}; expected tags, spans or text")
    with atomic_write(path) as fh:
        for r in records:
            row = {"id": r["id"], "report_id": r["report_id"], **({"split": r["split"]} if r.get("split") else {})}
            if form == "tags":
                row.update(tokens=r["tokens"], ner_tags=spans_to_tags(len(r["tokens"]), r["spans"]))
            elif form == "spans":
                row.update(tokens=r["tokens"], spans=r["spans"])
            else:
                starts = [sum(len(t) + 1 for t in r["tokens"][:i]) for i in range(len(r["tokens"]))]
                ends = [start + len(t) for start, t in zip(starts, r["tokens"])]
                row.update(text=" ".join(r["tokens"]), spans=[[starts[s], ends[e], k] for s, e, k in r["spans"]])
            fh.write(json.dumps(row) + "\n")
