"""The programmatic GREEN teacher: an edit log, written as a GREEN response (appendix A.2 format).

Because every edit of a pair is logged with its category and significance, the annotation is exact:
`parse_green_response(annotation)` returns the logged counts (tested for every pair the builders make).
"""

from __future__ import annotations

from radmetrics.inference.metrics.green.format import CATEGORY_LETTERS, render_green_response

from .pairs import Edit, PairRecord


def describe(edit: Edit) -> str:
    before, after = edit.before.rstrip(". "), edit.after.rstrip(". ")
    if edit.category == "a":
        return f"The candidate reports \"{after}\", which the reference does not mention"
    if edit.category == "b":
        return f"The candidate omits \"{before}\"" if not after else f"The candidate reports \"{after}\" where the reference reports \"{before}\""
    if edit.category == "c":
        return f"Location differs: \"{after}\" instead of \"{before}\""
    if edit.category == "d":
        return f"Severity or size differs: \"{after}\" instead of \"{before}\""
    if edit.category == "e":
        return f"The candidate mentions a comparison absent from the reference: \"{after}\""
    return f"The candidate omits the comparison \"{before}\""


def counts_from_edits(edits: list[Edit]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sig = tuple(sum(1 for e in edits if e.category == c and e.significant) for c in CATEGORY_LETTERS)
    insig = tuple(sum(1 for e in edits if e.category == c and not e.significant) for c in CATEGORY_LETTERS)
    return sig, insig


def programmatic_annotation(pair: PairRecord) -> dict:
    """The GREEN annotation record of DESIGN.md: the pair + `response` + `teacher`."""
    errors = [e for e in pair.edits if e.category is not None]
    significant = {c: [describe(e) for e in errors if e.category == c and e.significant] for c in CATEGORY_LETTERS}
    insignificant = {c: [describe(e) for e in errors if e.category == c and not e.significant] for c in CATEGORY_LETTERS}
    n_sig = sum(len(v) for v in significant.values())
    explanation = (f"The candidate differs from the reference in {len(errors)} finding(s), {n_sig} of them clinically significant."
                   if errors else "The candidate report conveys the same findings as the reference report.")
    if any(e.kind == "reordered_sentences" for e in pair.edits):
        explanation += " The order of sentences differs, which is not an error."
    response = render_green_response(explanation, significant, insignificant, pair.matched_findings)
    return {**pair.to_dict(), "response": response, "teacher": "programmatic"}
