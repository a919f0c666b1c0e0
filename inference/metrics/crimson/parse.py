"""CRIMSON's answer parser, as crimson-score 0.2.0 has it (`CRIMSON/utils.parse_json_response`): the same fixes in
the same order, so the same answer gives the same evaluation or the same refusal.

0. always: curly double quotes become `\\"`, curly single quotes `\\'` (an invalid JSON escape, fixed in step 3 into
   a literal backslash), `["":[` becomes `[`, and a key missing its opening quote gets one (this also rewrites some
   string values, e.g. "3, large" -> '3, "large');
1. json.loads (a repeated key keeps its first value);
2. orphan keys removed (a bare string inside an object; this also drops middle items of string lists);
3. invalid backslash escapes doubled (on step 0's text);
4. unescaped double quotes escaped one at a time at the decoder's error position (at most 50), on step 0's text,
   then on step 3's.
Nothing extracts JSON from prose or a code fence, mends a trailing comma or completes a truncated answer: those raise
CrimsonParseError, and the pair is not scored (the reference raises ValueError).
"""

from __future__ import annotations

import json
import re

_INVALID_ESCAPE = re.compile(r'\\(?!["\\\//bfnrtu])')
_ORPHAN_KEY_AFTER_COMMA = re.compile(r',\s*"[^"]*"\s*(?=\s*[,}])(?!\s*:)')
_ORPHAN_KEY_AT_START = re.compile(r'(?<=\{)\s*"[^"]*"\s*,\s*(?=")')
_MALFORMED_ARRAY_OBJECT = re.compile(r'\[""\s*:\s*\[')
_MISSING_OPEN_QUOTE = re.compile(r'([\]}"0-9]\s*,\s*|{\s*)([a-zA-Z_][a-zA-Z0-9_]*")')
MAX_QUOTE_FIXES = 50


class CrimsonParseError(ValueError):
    pass


def _first_key_wins(pairs):
    result = {}
    for key, value in pairs:
        if key not in result:
            result[key] = value
    return result


def _loads(text: str):
    return json.loads(text, object_pairs_hook=_first_key_wins)


def _is_structural_quote(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if before in (":", "[", "{") or after in (":", "]", "}"):
        return True
    if before == ",":
        pre_comma = text[i - 2] if i >= 2 else ""
        return pre_comma in ('"', "]", "}") or pre_comma.isdigit()
    if after == ",":
        post_comma = text[i + 2] if i + 2 < len(text) else ""
        return post_comma in ('"', "[", "{") or post_comma.isdigit()
    return False


def _escape_stray_quotes(text: str):
    for _ in range(MAX_QUOTE_FIXES):
        try:
            return _loads(text)
        except json.JSONDecodeError as exc:
            position, found = exc.pos, False
            for i in range(position, max(0, position - 5) - 1, -1):
                if i < len(text) and text[i] == '"' and (i == 0 or text[i - 1] != "\\"):
                    if _is_structural_quote(text, i):
                        continue
                    text, found = text[:i] + '\\"' + text[i + 1 :], True
                    break
            if not found:
                raise
    raise json.JSONDecodeError("Max quote-fix attempts reached", text, 0)


def parse_crimson_answer(answer: str):
    """The evaluation a model's answer holds (any JSON value, as the reference returns it), or CrimsonParseError."""
    if not isinstance(answer, str):
        raise CrimsonParseError(f"the answer is {type(answer).__name__}, not text")
    text = answer.replace("\u201c", '\\"').replace("\u201d", '\\"').replace("\u2018", "\\'").replace("\u2019", "\\'")
    text = _MALFORMED_ARRAY_OBJECT.sub("[", text)
    text = _MISSING_OPEN_QUOTE.sub(r'\1"\2', text)
    try:
        return _loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return _loads(_ORPHAN_KEY_AT_START.sub("", _ORPHAN_KEY_AFTER_COMMA.sub("", text)))
    except json.JSONDecodeError:
        pass
    escaped = _INVALID_ESCAPE.sub(r"\\\\", text)
    try:
        return _loads(escaped)
    except json.JSONDecodeError:
        pass
    for variant in (text, escaped):
        try:
            return _escape_stray_quotes(variant)
        except (json.JSONDecodeError, ValueError):
            pass
    raise CrimsonParseError(f"the answer is not JSON the reference can read ({len(answer)} characters)")
