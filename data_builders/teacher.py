"""The programmatic GREEN teacher: an edit log, written as a GREEN response (appendix A.2 format).

Because every edit of a pair is logged with its category and significance, the annotation is exact:
`parse_green_response(annotation)` returns the logged counts (tested for every pair the builders make).

The [Explanation] walks through the reference, then the candidate, one sentence per line, and states for each
sentence whether it is matched or an error, with the error's category, its significance and a running number
per (significance, category). Every count in the sections that follow is then the last number of its kind in the
walk, so a small model can learn it from local decisions instead of counting a whole pair at once (a one-line
summary of the totals was not learned by the tiny CPU model: it answered the same counts for every pair).
"""

from __future__ import annotations

from radmetrics.inference.green_format import CATEGORY_LETTERS, render_green_response
from radmetrics.inference.sentences import split_sentences

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


def explanation_walk(pair: PairRecord) -> str:
    """One line per reference sentence, then per candidate sentence, each error numbered within its
    (significance, category); edits whose sentence the walk did not meet are listed last."""
    errors = [e for e in pair.edits if e.category is not None]
    pending_ref = [e for e in errors if e.before]
    pending_cand = [e for e in errors if not e.before]
    changed = {e.after.strip() for e in pending_ref if e.after}
    numbers: dict[tuple[bool, str], int] = {}

    def verdict(edit: Edit) -> str:
        key = (bool(edit.significant), edit.category)
        numbers[key] = numbers.get(key, 0) + 1
        return f"{'significant' if edit.significant else 'insignificant'} ({edit.category}) {numbers[key]}."

    def line(edit: Edit) -> str:
        if edit.before and edit.after:
            return f"Reference \"{edit.before}\": the candidate has \"{edit.after}\", {verdict(edit)}"
        if edit.before:
            return f"Reference \"{edit.before}\": missing from the candidate, {verdict(edit)}"
        return f"Candidate \"{edit.after}\": not in the reference, {verdict(edit)}"

    def take(pending: list[Edit], sentence: str, side: str) -> Edit | None:
        edit = next((e for e in pending if getattr(e, side).strip() == sentence), None)
        if edit is not None:
            pending.remove(edit)
        return edit

    lines = []
    for sentence in split_sentences(pair.reference):
        edit = take(pending_ref, sentence.strip(), "before")
        lines.append(line(edit) if edit else f"Reference \"{sentence}\": also in the candidate.")
    for sentence in split_sentences(pair.candidate):
        edit = take(pending_cand, sentence.strip(), "after")
        if edit:
            lines.append(line(edit))
        elif sentence.strip() in changed:
            lines.append(f"Candidate \"{sentence}\": changed from the reference, see above.")
        else:
            lines.append(f"Candidate \"{sentence}\": also in the reference.")
    lines += [line(e) for e in pending_ref + pending_cand]
    if not errors:
        lines.append("The candidate report conveys the same findings as the reference report.")
    if any(e.kind == "reordered_sentences" for e in pair.edits):
        lines.append("The order of sentences differs, which is not an error.")
    return "\n".join(lines)


def programmatic_annotation(pair: PairRecord) -> dict:
    """The GREEN annotation record of DESIGN.md: the pair + `response` + `teacher`."""
    errors = [e for e in pair.edits if e.category is not None]
    significant = {c: [describe(e) for e in errors if e.category == c and e.significant] for c in CATEGORY_LETTERS}
    insignificant = {c: [describe(e) for e in errors if e.category == c and not e.significant] for c in CATEGORY_LETTERS}
    response = render_green_response(explanation_walk(pair), significant, insignificant, pair.matched_findings)
    return {**pair.to_dict(), "response": response, "teacher": "programmatic"}
