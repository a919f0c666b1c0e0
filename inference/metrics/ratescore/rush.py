"""Sentence splitting as RaTEScore 0.6.0 does it: RuSH (Shi et al., rule-based sentence segmentation), the
PyRuSH sentencizer that medspacy 1.3.1 loads with its English rules (`resources/rush_rules.tsv`, bundled).

The rules are matched by PyFastNER (RuSH's own rule engine, a plain Python package). The span assembly
below follows PyRuSH 1.0.13 `RuSH.segToSentenceSpans` (with `auto_fix_gaps`, at least 5 characters for a gap
to become its own sentence). medspacy then marks the spaCy tokens at every span start and after every span
end; RaTEScore keeps each piece stripped, when it has a word and at least 3 characters. Cutting the text at
span starts and ends gives the same pieces wherever spans begin and end on token boundaries (all 3,826 IU
X-ray reports; tests/data/released checks it against the reference), without spaCy, whose pins for Python
3.11 need numpy<2.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

BEGIN, END = "stbegin", "stend"
MIN_GAP_CHARS = 5


def _trim_gap(text: str, start: int, stop: int) -> tuple[int, int] | None:
    """The gap text[start:stop] without leading whitespace and cut after its last letter, digit or closing mark."""
    gap = text[start:stop]
    first = next((i for i, ch in enumerate(gap) if not ch.isspace()), -1)
    last = 0
    for i in range(len(gap) - 1, first, -1):
        if gap[i].isalnum() or gap[i] in '.!?)]"':
            last = i
            break
    return (first + start, last + start + 1) if last > first != -1 else None


class RushSplitter:
    def __init__(self, max_repeat: int = 50):
        try:
            from PyFastNER import FastCNER
        except ImportError as exc:
            raise ImportError("RaTEScore's sentence splitter needs PyFastNER (pip install PyFastNER)") from exc
        self.matcher = FastCNER(str(files("radmetrics.inference").joinpath("resources", "rush_rules.tsv")), max_repeat)
        self.matcher.span_compare_method = "scorewidth"
        if not self.matcher.full_definition:  # RuSH's old rule format: odd scores are pseudo (negative) rules
            for rule in self.matcher.rule_store.values():
                if rule.score % 2 != 0:
                    rule.type = "PSEUDO"
            self.matcher.constructRuleMap(self.matcher.rule_store)

    def _fix_gap(self, spans: list[list[int]], text: str, start: int, stop: int) -> None:
        gap = _trim_gap(text, start, stop)
        if gap is None:
            return
        if gap[1] - gap[0] > MIN_GAP_CHARS:
            spans.append(list(gap))
        elif spans:
            spans[-1][1] = gap[1]

    def spans(self, text: str) -> list[list[int]]:
        """Sentence spans [begin, end) of `text`."""
        found: dict = {BEGIN: [], END: []}
        self.matcher.process(text, 0, found)
        begins, ends = found[BEGIN], found[END]
        spans: list[list[int]] = []
        begin = end = next_end = 0
        open_sentence = False
        for i, marker in enumerate(begins):
            if not open_sentence:
                begin = marker.begin
                if begin < end:
                    continue
                open_sentence = True
            elif marker.begin < end:
                continue
            if spans and begin > spans[-1][1]:
                self._fix_gap(spans, text, spans[-1][1], begin)
            elif not spans and begin > 0:
                self._fix_gap(spans, text, 0, begin)
            for k in range(next_end, len(ends)):
                if i < len(begins) - 1 and k < len(ends) - 1 and begins[i + 1].begin < ends[k].begin + 1:
                    break
                end, next_end = ends[k].begin + 1, k
                while end >= 1 and (text[end - 1].isspace() or ord(text[end - 1]) == 160):
                    end -= 1
                if end < begin:
                    continue
                if open_sentence:
                    spans.append([begin, end])
                    open_sentence = False
                    if i == len(begins) - 1 or (k < len(ends) - 1 and begins[i + 1].begin > ends[k + 1].end):
                        continue  # the next end marker may extend this sentence
                    break
                spans[-1] = [begin, end]
        if spans:
            head = _trim_gap(text, 0, spans[0][0])
            if head is not None:
                if spans[0][0] <= ends[0].begin:
                    spans[0][0] = head[0]
                else:
                    spans.insert(0, list(head))
            tail = _trim_gap(text, spans[-1][1], len(text))
            if tail is not None:
                if tail[1] - tail[0] > MIN_GAP_CHARS:
                    spans.append(list(tail))
                else:
                    spans[-1][1] = tail[1]
        else:
            whole = _trim_gap(text, 0, len(text))
            if whole is not None and whole[1] - whole[0] > MIN_GAP_CHARS:
                spans.append(list(whole))
        return spans

    def sentences(self, text: str) -> list[str]:
        """RaTEScore's sentences of one report: pieces between span boundaries, stripped, with a word and >= 3
        characters."""
        cuts = sorted({0, len(text), *(position for span in self.spans(text) for position in span)})
        pieces = (text[a:b].strip() for a, b in zip(cuts, cuts[1:]))
        return [piece for piece in pieces if piece.split() and len(piece) >= 3]


@lru_cache(maxsize=1)
def rush_splitter() -> RushSplitter:
    return RushSplitter()
