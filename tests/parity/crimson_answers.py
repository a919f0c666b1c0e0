"""The scripted judge of the CRIMSON parity check: 34 answers that cover every error type, every significance level
(and an unknown one), both attribute severities, a reference with no findings, duplicate matches and ids, and answers
the reference must repair or refuse (curly quotes, a stray quote, a bad escape, an orphan key, prose around the JSON, a
code fence, truncated JSON, a trailing comma, a list, an id missing). Written for radmetrics; each is answered to one
pair of `pairs()`, recognised by its candidate text in the prompt."""

from __future__ import annotations

import json

from radmetrics.inference.metrics.crimson.score import ERROR_TYPES as TYPES
from radmetrics.inference.metrics.crimson.score import SIGNIFICANCE_WEIGHTS

LEVELS = tuple(SIGNIFICANCE_WEIGHTS)  # urgent, actionable_not_urgent, not_actionable_not_urgent, benign_expected


def finding(i: str, text: str, significance: str) -> dict:
    return {"id": i, "finding": text, "clinical_significance": significance}


def answer(refs, preds, matched=(), false=(), missing=(), attributes=()) -> str:
    return json.dumps(
        {
            "reference_findings": [finding(*r) for r in refs],
            "predicted_findings": [finding(*p) for p in preds],
            "matched_findings": [{"ref_id": r, "pred_id": p} for r, p in matched],
            "errors": {
                "false_findings": list(false),
                "missing_findings": list(missing),
                "attribute_errors": [
                    {"ref_id": r, "pred_id": p, "severity": s, "error_types": t, "explanation": "differs"}
                    for r, p, s, t in attributes
                ],
            },
        }
    )


def answers() -> list[str]:
    out = []
    for level in LEVELS:  # a match, a missing and a false finding at each level
        out.append(answer([("R1", "effusion", level)], [("P1", "effusion", level)], [("R1", "P1")]))
        out.append(answer([("R1", "effusion", level)], [], missing=["R1"]))
        out.append(answer([], [("P1", "nodule", level)], false=["P1"]))
    for n, kind in enumerate(TYPES):  # each attribute error type, significant and negligible in turn
        out.append(
            answer(
                [("R1", "left effusion", "actionable_not_urgent")],
                [("P1", "right effusion", "actionable_not_urgent")],
                [("R1", "P1")],
                attributes=[("R1", "P1", ("significant", "negligible")[n % 2], [kind])],
            )
        )
    out.append(answer([], []))  # no findings on either side
    out.append(  # one reference finding matched twice, an id listed twice, an unknown significance
        answer(
            [("R1", "bilateral effusions", "actionable_not_urgent"), ("R2", "mass", "urgent")],
            [("P1", "left effusion", "sometimes"), ("P2", "right effusion", "x"), ("P3", "mass", "urgent")],
            [("R1", "P1"), ("R1", "P2")],
            false=["P3", "P3"],
            missing=["R2"],
            attributes=[("R1", "P1", "odd", ["location", "severity"])],
        )
    )
    plain = answer([("R1", "pneumothorax", "urgent")], [("P1", "pneumothorax", "urgent")], [("R1", "P1")])
    out += [
        plain.replace('"pneumothorax"', "\u201cpneumothorax\u201d", 1),  # curly double quotes
        plain.replace('"finding": "pneumothorax"', '"finding": "patient\u2019s pneumothorax"', 1),  # curly apostrophe
        plain.replace('"finding": "pneumothorax"', '"finding": "a "large" pneumothorax"', 1),  # a stray quote
        plain.replace('"finding": "pneumothorax"', '"finding": "pneumothorax \\L apex"', 1),  # a bad escape
        plain.replace('{"ref_id": "R1", "pred_id": "P1"}', '{"ref_id": "R1", "pred_old", "pred_id": "P1"}'),  # orphan
        "Here is my evaluation: " + plain,  # prose before the JSON
        "```json\n" + plain + "\n```",  # a code fence
        plain[: len(plain) // 2],  # truncated
        plain.replace("]}}", "],}}"),  # a trailing comma
        "[]",  # a list, not an object
        plain.replace('"id": "R1", ', ""),  # a reference finding without an id
        plain.replace('"finding": "pneumothorax"', '"finding": "size 3, large"', 1),  # its missing-quote rule
    ]
    return out
