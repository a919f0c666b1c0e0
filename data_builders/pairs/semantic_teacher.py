"""GREEN annotations by the semantic teacher, for any pairs: the builders' (instead of their edit logs) or a user's.

The teacher itself is the `semantic_green` metric's (radmetrics.inference.metrics.semantic_green: teacher.py for the
matching, and inference/text/word_rules.py for the word rules, each chosen on RadPref's development half), so that
what a student learns and what `radmetrics score --metrics semantic_green` reports are one and the same decision.
"""

from __future__ import annotations

from collections.abc import Sequence

TEACHER = "semantic_green"


def semantic_teacher(encoder: str = "default"):
    from radmetrics.inference.metrics.semantic_green.teacher import SemanticTeacher
    from radmetrics.inference.models.text_encoder import TextEncoder

    return SemanticTeacher(TextEncoder(encoder))


UNITS = ("findings", "statements")


def semantic_annotations(
    records: Sequence[dict],
    encoder: str = "default",
    progress: bool = True,
    quoted: bool = False,
    explanation: str = "walkthrough",
    units: str = "findings",
) -> list[dict]:
    """Each record (with `reference` and `candidate`, and a `context` if it has one) + `response` (GREEN's format, a
    numbered walkthrough as its explanation, each item named by number, or with its first words: `quoted`;
    `explanation`: "walkthrough" or "summary", see `Annotation.response`), `teacher`, its `counts` and its
    `weighted_errors` (CRIMSON's weights by each finding's clinical significance).

    `units`: "findings" (the default: the findings extractor's lists, judged as `semantic_green` judges them; each
    record also gets `reference_findings` and `candidate_findings`, the items the response numbers, which the
    `findings` prompt shows a student) or "statements" (every statement, as before findings-first; the `numbered`
    prompt numbers them)."""
    from radmetrics.inference.metrics.semantic_green.metric import SemanticGreen, weighted_errors

    if units not in UNITS:
        raise ValueError(f"semantic teacher units {units!r}: expected one of {', '.join(UNITS)}")
    metric = SemanticGreen(encoder=encoder, findings="extractor" if units == "findings" else "statements")
    metric.options["progress"] = progress
    annotations = metric.annotate([r["reference"] for r in records], [r["candidate"] for r in records])
    annotated = []
    for record, a in zip(records, annotations):
        extra = (
            {"reference_findings": a.reference_statements, "candidate_findings": a.candidate_statements}
            if units == "findings"
            else {}
        )
        annotated.append(
            {
                **record,
                **extra,
                "response": a.response(quoted, explanation),
                "teacher": TEACHER,
                "teacher_units": units,
                "counts": {
                    "significant": list(a.significant),
                    "insignificant": list(a.insignificant),
                    "matched": a.matched,
                    "weighted_errors": weighted_errors(a, record.get("context"))[0],
                },
            }
        )
    return annotated
