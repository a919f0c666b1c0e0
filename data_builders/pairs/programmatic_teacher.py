"""The programmatic GREEN teacher: an edit log, written as a GREEN response (appendix A.2 format).

Because every edit of a pair is logged with its category and significance, the annotation is exact:
`parse_green_response(annotation)` returns the logged counts (tested for every pair the builders make).

The [Explanation] is free text in GREEN. Two are written (`explanation`):
- "summary": the counts in one sentence ("The candidate differs from the reference in 3 finding(s), 1 of them
  clinically significant."): a model trained on it commits to the counts before it has compared anything;
- "walkthrough": each candidate sentence in turn, named by its first words, with its verdict (matched, or its error
  category and significance), then each reference sentence the candidate lacks, and the summary sentence last, so
  that a model decides one sentence at a time and the counts follow from what it has written.
"""

from __future__ import annotations

from radmetrics.inference.metrics.green.format import CATEGORY_LETTERS, render_green_response
from radmetrics.inference.text.sentences import split_sentences

from .builders import Edit, PairRecord, normalise_sentence

EXPLANATIONS = ("summary", "walkthrough")


def describe(edit: Edit) -> str:
    before, after = edit.before.rstrip(". "), edit.after.rstrip(". ")
    if edit.category == "a":
        return f'The candidate reports "{after}", which the reference does not mention'
    if edit.category == "b":
        return (
            f'The candidate omits "{before}"'
            if not after
            else f'The candidate reports "{after}" where the reference reports "{before}"'
        )
    if edit.category == "c":
        return f'Location differs: "{after}" instead of "{before}"'
    if edit.category == "d":
        return f'Severity or size differs: "{after}" instead of "{before}"'
    if edit.category == "e":
        return f'The candidate mentions a comparison absent from the reference: "{after}"'
    return f'The candidate omits the comparison "{before}"'


def counts_from_edits(edits: list[Edit]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sig = tuple(sum(1 for e in edits if e.category == c and e.significant) for c in CATEGORY_LETTERS)
    insig = tuple(sum(1 for e in edits if e.category == c and not e.significant) for c in CATEGORY_LETTERS)
    return sig, insig


QUOTED_WORDS = 6  # a sentence is named by its first words: enough to find it, and the explanation stays short


def quote(sentence: str) -> str:
    words = sentence.rstrip(". ").split()
    return f'"{" ".join(words[:QUOTED_WORDS])}{" ..." if len(words) > QUOTED_WORDS else ""}"'


def verdict(edit: Edit) -> str:
    """`(b) significant`: the error's GREEN category and its significance."""
    return f"({edit.category}) {'significant' if edit.significant else 'insignificant'}"


def candidate_sentences(candidate: str, known: list[str]) -> list[str]:
    """The candidate cut back into the sentences the builder joined with spaces (`known`: its matched findings and its
    edits' new sentences, longest first, each ending at a space or the end), whatever splitter built the pair; text no
    known sentence starts is split by the robust splitter up to the next known one."""
    known = sorted({k.strip() for k in known if k.strip()}, key=len, reverse=True)
    sentences, rest = [], candidate.strip()
    while rest:
        piece = next((k for k in known if rest.startswith(k) and rest[len(k) : len(k) + 1] in ("", " ")), None)
        if piece is None:
            end = min((i for k in known if (i := rest.find(" " + k)) > 0), default=len(rest))
            piece = rest[:end]
            sentences.extend(split_sentences(piece))
        else:
            sentences.append(piece)
        rest = rest[len(piece) :].strip()
    return sentences


def walkthrough(candidate: str, errors: list[Edit], matched: list[str]) -> list[str]:
    """One line per candidate sentence (matched, or its error), then one per error the candidate's sentences did not
    show (mostly the reference's sentences it lacks). Every error is listed exactly once."""
    pending = [e for e in errors if e.after]
    lines = []
    for sentence in candidate_sentences(candidate, [*matched, *(e.after for e in pending)]):
        edit = next((e for e in pending if normalise_sentence(e.after) == normalise_sentence(sentence)), None)
        if edit is not None:
            pending.remove(edit)
        lines.append(f"{quote(sentence)}: {'matched' if edit is None else verdict(edit)}.")
    for edit in pending + [e for e in errors if not e.after]:
        lines.append(f"{'' if edit.after else 'reference only '}{quote(edit.after or edit.before)}: {verdict(edit)}.")
    return lines


def programmatic_annotation(pair: PairRecord, explanation: str = "summary") -> dict:
    """The GREEN annotation record of DESIGN.md: the pair + `response` + `teacher`; `explanation` is one of
    EXPLANATIONS."""
    if explanation not in EXPLANATIONS:
        raise ValueError(f"explanation {explanation!r}: expected one of {EXPLANATIONS}")
    errors = [e for e in pair.edits if e.category is not None]
    significant = {c: [describe(e) for e in errors if e.category == c and e.significant] for c in CATEGORY_LETTERS}
    insignificant = {
        c: [describe(e) for e in errors if e.category == c and not e.significant] for c in CATEGORY_LETTERS
    }
    n_sig = sum(len(v) for v in significant.values())
    summary = (
        f"The candidate differs from the reference in {len(errors)} finding(s), {n_sig} of them clinically"
        " significant."
        if errors
        else "The candidate report conveys the same findings as the reference report."
    )
    if any(e.kind == "reordered_sentences" for e in pair.edits):
        summary += " The order of sentences differs, which is not an error."
    text = (
        summary
        if explanation == "summary"
        else " ".join([*walkthrough(pair.candidate, errors, pair.matched_findings), summary])
    )
    response = render_green_response(text, significant, insignificant, pair.matched_findings)
    return {**pair.to_dict(), "response": response, "teacher": "programmatic"}
