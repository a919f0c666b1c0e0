"""Token-level NER records, the form every token-label reader returns and the rate_ner recipes read:
`{"id", "report_id", "tokens", "ner_tags", "spans", "split"?}` with IOB2 tags and `spans` `[start, end, type]` over
word tokens, end inclusive (PURE's convention; the silver labels' layout). IOB1 input (an entity may open with I-)
is read as IOB2: a tag only needs B- where an entity follows another of the same type."""

from __future__ import annotations

from radmetrics.inference.text.sentences import tokenize


def tag_problem(tag: str) -> str | None:
    """Why `tag` is not an IOB tag ('O', 'B-TYPE' or 'I-TYPE'), or None."""
    if tag == "O":
        return None
    if len(tag) > 2 and tag[:2] in ("B-", "I-") and tag[2:].strip() == tag[2:]:
        return None
    return f"tag {tag!r} is not O, B-TYPE or I-TYPE"


def tags_to_spans(tags: list[str]) -> list[list]:
    """IOB1 or IOB2 tags -> [start, end, type] spans (an I- that does not continue its type opens an entity)."""
    spans: list[list] = []
    for i, tag in enumerate(tags):
        if tag == "O":
            continue
        kind = tag[2:]
        if tag.startswith("I-") and spans and spans[-1][1] == i - 1 and spans[-1][2] == kind:
            spans[-1][1] = i
        else:
            spans.append([i, i, kind])
    return spans


def spans_to_tags(n_tokens: int, spans: list[list]) -> list[str]:
    """[start, end, type] spans (end inclusive, not overlapping) -> IOB2 tags."""
    tags = ["O"] * n_tokens
    for start, end, kind in spans:
        tags[start] = f"B-{kind}"
        for i in range(start + 1, end + 1):
            tags[i] = f"I-{kind}"
    return tags


def span_problem(spans: list[list], n_tokens: int) -> str | None:
    """Why token spans cannot be IOB-tagged (out of range, reversed, overlapping), or None."""
    taken: set[int] = set()
    for start, end, kind in spans:
        if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end < n_tokens:
            return f"span [{start}, {end}, {kind!r}] is outside the {n_tokens} tokens"
        if taken & set(range(start, end + 1)):
            return f"span [{start}, {end}, {kind!r}] overlaps another span"
        taken |= set(range(start, end + 1))
    return None


def token_offsets(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The words of `text` as the scorer's tagger reads them (inference.text.sentences.tokenize), with their character
    offsets [start, end)."""
    tokens, offsets, cursor = tokenize(text), [], 0
    for token in tokens:
        start = text.index(token, cursor)
        offsets.append((start, start + len(token)))
        cursor = start + len(token)
    return tokens, offsets


def char_span_to_tokens(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """Character span [start, end) -> (first token, last token), or None when it does not start at a token's start
    and end at a token's end."""
    first = next((i for i, (s, _) in enumerate(offsets) if s == start), None)
    last = next((i for i, (_, e) in enumerate(offsets) if e == end), None)
    if first is None or last is None or last < first:
        return None
    return first, last


def ner_record(record_id: str, report_id: str, tokens: list[str], spans: list[list], split: str | None) -> dict:
    record = {
        "id": record_id,
        "report_id": report_id,
        "tokens": list(tokens),
        "ner_tags": spans_to_tags(len(tokens), spans),
        "spans": [list(s) for s in sorted(spans)],
    }
    if split:
        record["split"] = split
    return record
