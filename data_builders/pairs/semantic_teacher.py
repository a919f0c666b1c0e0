"""GREEN annotations by the semantic teacher, for any pairs: the builders' (instead of their edit logs) or a user's.

The teacher itself is the `semantic_green` metric's (radmetrics.inference.metrics.semantic_green: teacher.py for the
matching and rules.py for the word rules, each chosen on RadPref's development half), so that what a student learns
and what `radmetrics score --metrics semantic_green` reports are one and the same decision.
"""

from __future__ import annotations

from collections.abc import Sequence

TEACHER = "semantic_green"


def semantic_teacher(encoder: str = "default"):
    from radmetrics.inference.metrics.semantic_green.teacher import SemanticTeacher
    from radmetrics.inference.models.text_encoder import TextEncoder

    return SemanticTeacher(TextEncoder(encoder))


def semantic_annotations(
    records: Sequence[dict],
    encoder: str = "default",
    progress: bool = True,
    quoted: bool = False,
    explanation: str = "walkthrough",
) -> list[dict]:
    """Each record (with `reference` and `candidate`) + `response` (GREEN's format, a numbered walkthrough as its
    explanation, statements named by number as `format.numbered_prompt` shows them, or with their first words:
    `quoted`; `explanation`: "walkthrough" or "summary", see `Annotation.response`), `teacher` and its `counts`."""
    annotations = semantic_teacher(encoder)(
        [r["reference"] for r in records], [r["candidate"] for r in records], progress=progress
    )
    return [
        {
            **record,
            "response": a.response(quoted, explanation),
            "teacher": TEACHER,
            "counts": {
                "significant": list(a.significant),
                "insignificant": list(a.insignificant),
                "matched": a.matched,
            },
        }
        for record, a in zip(records, annotations)
    ]
