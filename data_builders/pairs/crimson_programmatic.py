"""A programmatic CRIMSON teacher, for the tiny and small `crimson/sft` configs and the CPU rehearsals, which have no
LLM: a pair built by the pair heuristics (builders.py) knows its errors, and this writes them as CRIMSON's answer.

- Findings: each side's abnormal statements (edit_lexicons.is_abnormal_finding), as R1.. and P1..; the same statement
  on both sides (normalised) is a match.
- A statement whose edit changed its laterality or its severity (edit categories c and d) matches its changed
  counterpart with a significant attribute error (location or severity).
- Unmatched reference findings are missing findings, unmatched candidate findings false findings.
- Clinical significance by a short word list (URGENT, BENIGN below), else actionable not urgent: a rough stand-in for
  a radiologist's judgement, which the LLM teacher (`--teacher_endpoint`) gives instead.
"""

from __future__ import annotations

import json
import re

from radmetrics.inference.text.sentences import split_sentences

from . import edit_lexicons as fx
from .builders import normalise_sentence

URGENT = re.compile(r"\b(pneumothorax|free air|pneumoperitoneum|dissection|malposition\w*|tension)\b", re.I)
BENIGN = re.compile(r"\b(granuloma\w*|degenerative|calcified|old|healed|tortuous|atheroscl\w*)\b", re.I)
ATTRIBUTE = {"c": "location", "d": "severity"}


def significance(statement: str) -> str:
    if URGENT.search(statement):
        return "urgent"
    if BENIGN.search(statement):
        return "benign_expected"
    return "actionable_not_urgent"


def programmatic_evaluation(pair: dict) -> dict:
    """CRIMSON's answer (the reference's OUTPUT_FORMAT) for a built pair (`reference`, `candidate`, `edits`)."""
    reference = [s for s in split_sentences(pair["reference"]) if fx.is_abnormal_finding(s)]
    candidate = [s for s in split_sentences(pair["candidate"]) if fx.is_abnormal_finding(s)]
    changed = {
        normalise_sentence(e["before"]): (normalise_sentence(e["after"]), ATTRIBUTE[e["category"]])
        for e in pair.get("edits", [])
        if e.get("category") in ATTRIBUTE and e.get("before") and e.get("after")
    }
    by_text = {normalise_sentence(s): f"P{i + 1}" for i, s in enumerate(candidate)}
    matched, attribute_errors, used = [], [], set()
    for i, statement in enumerate(reference):
        ref_id, key = f"R{i + 1}", normalise_sentence(statement)
        error = None
        pred_id = by_text.get(key)
        if pred_id is None and key in changed:
            after, error = changed[key]
            pred_id = by_text.get(after)
        if pred_id is None or pred_id in used:
            continue
        used.add(pred_id)
        matched.append({"ref_id": ref_id, "pred_id": pred_id})
        if error:
            attribute_errors.append(
                {
                    "ref_id": ref_id,
                    "pred_id": pred_id,
                    "severity": "significant",
                    "error_types": [error],
                    "explanation": f"The candidate changes the finding's {error}.",
                }
            )
    matched_refs = {m["ref_id"] for m in matched}
    return {
        "reference_findings": [
            {"id": f"R{i + 1}", "finding": s, "clinical_significance": significance(s)}
            for i, s in enumerate(reference)
        ],
        "predicted_findings": [
            {"id": f"P{i + 1}", "finding": s, "clinical_significance": significance(s)}
            for i, s in enumerate(candidate)
        ],
        "matched_findings": matched,
        "errors": {
            "false_findings": [f"P{i + 1}" for i in range(len(candidate)) if f"P{i + 1}" not in used],
            "missing_findings": [f"R{i + 1}" for i in range(len(reference)) if f"R{i + 1}" not in matched_refs],
            "attribute_errors": attribute_errors,
        },
    }


def programmatic_answer(pair: dict) -> str:
    return json.dumps(programmatic_evaluation(pair))
