"""LLM-driven data building through the LLM engine: error injection (GREEN appendix A.4) and teacher annotation
with the GREEN prompt (appendix A.1).

Error injection: per reference, a combination of GREEN error categories (a)-(f) is sampled; the LLM writes a
candidate that carries those errors ("subtle" variant with probability 0.5, as in A.4), or, when no category
is sampled, a rephrasing with the same meaning. The pair's edit log records the requested categories
(`kind = "llm_requested_error"`, significance unknown until a teacher annotates it) or the rephrasing.

Teacher annotation: each pair gets the A.1 prompt; an answer is accepted only if the GREEN parser reads it
(strict), else it is re-prompted; a pair that never gets a readable answer is listed as failed. Every answer
is cached by the engine, so an interrupted run re-sends nothing when started again.
"""

from __future__ import annotations

import random
import re

from radmetrics.inference.llm.engine import LLMEngine, LLMTask
from radmetrics.inference.metrics.green.format import CATEGORIES, CATEGORY_LETTERS, green_prompt, parse_green_response

from ..corpus.corpora import Report
from .builders import Edit, PairRecord

LLM_HEURISTIC = "llm_error_injection"
SUBTLE = "Aim for subtlety, adjusting only one word where feasible. "


def error_injection_prompt(report: str, categories: list[str], subtle: bool) -> str:
    """Appendix A.4's prompt: inject the named error types, or rephrase when there are none."""
    if categories:
        error_types = ", ".join(CATEGORIES[c] for c in categories)
        return (
            "[Objective]: Create a candidate radiology report that subtly integrates specific errors based on the "
            "provided reference report.\nProcess Overview: You will be presented with:\n1. Style of errors.\n"
            "2. A reference radiology report to base your candidate report on.\n3. The desired format for your "
            "candidate report. Note: Be short in your response!\n\nStyle of errors:\n"
            f"Introduce errors related to {error_types}. The errors should be woven into the report as if they were "
            "genuine observations from a medical image, without any meta-commentary on their accuracy. "
            f"{SUBTLE if subtle else ''}\n\nReference Report: \n{report}\n Desired format for your candidate report: "
            "\n\n[Candidate]: <Candidate Report>"
        )
    return (
        "[Objective]: Create a candidate radiology report that has the same clinical meaning but is slightly "
        "rephrased.\nProcess Overview: You will be presented with: \n 1.A reference radiology report to base your "
        "candidate report on. \n 2. The desired format for your candidate report.\nNote: Be short in your response! "
        f"\n\n Reference radiology report: \n{report}\n\nDesired format for your candidate report: \n\n "
        "[Candidate]: <Candidate Report>"
    )


def sample_error_combination(rng: random.Random, max_errors: int = 3) -> list[str]:
    """0..max_errors distinct categories, each count equally likely (0 = rephrase only)."""
    return sorted(rng.sample(CATEGORY_LETTERS, rng.randint(0, max_errors)))


def parse_candidate(text: str) -> str:
    """The report after "[Candidate]:"; raises ValueError when it is missing or empty."""
    match = re.search(r"\[Candidate\]:\s*(.*)", text, re.DOTALL)
    candidate = " ".join(match.group(1).replace("<Candidate Report>", "").split()) if match else ""
    if not candidate:
        raise ValueError('the answer must end with "[Candidate]: " followed by the candidate report')
    return candidate


def inject_errors(
    reports: list[Report], splits: dict[str, str], engine: LLMEngine, seed: int = 0, max_errors: int = 3
) -> tuple[list[PairRecord], list[dict]]:
    """One LLM-written candidate per reference. Returns (pairs, failures)."""
    rng = random.Random(seed)
    plans = []
    for report in reports:
        categories = sample_error_combination(rng, max_errors)
        plans.append((report, categories, rng.random() > 0.5))
    tasks = [
        LLMTask(
            f"inject-{r.id}",
            [{"role": "user", "content": error_injection_prompt(r.text, cats, subtle)}],
            parse_candidate,
        )
        for r, cats, subtle in plans
    ]
    pairs, failures = [], []
    for (report, categories, subtle), result in zip(plans, engine.run(tasks)):
        if not result.ok:
            failures.append({"reference_id": report.id, "error": result.error})
            continue
        kind = f"llm_requested_error{'_subtle' if subtle else ''}"
        edits = [Edit(kind, None, "", "", c, None) for c in categories] or [
            Edit("llm_rephrase", None, "", "", None, False)
        ]
        pairs.append(
            PairRecord(
                f"{LLM_HEURISTIC}-{report.id}",
                report.text,
                result.parsed,
                LLM_HEURISTIC,
                splits[report.id],
                edits,
                [],
                report.id,
            )
        )
    return pairs, failures


def validate_green_answer(text: str):
    parsed = parse_green_response(text)
    if not parsed.parsed:
        raise ValueError("the assessment does not follow the required format: " + "; ".join(parsed.problems))
    return parsed


def annotate_pairs(pairs: list[dict], engine: LLMEngine) -> tuple[list[dict], list[dict]]:
    """GREEN annotation records (the pair + `response` + `teacher`) from the LLM teacher (the engine's
    `max_reprompts` bounds the re-prompts after unreadable answers). Returns (records, failures)."""
    tasks = [
        LLMTask(
            f"green-{p['id']}",
            [{"role": "user", "content": green_prompt(p["reference"], p["candidate"])}],
            validate_green_answer,
        )
        for p in pairs
    ]
    records, failures = [], []
    for pair, result in zip(pairs, engine.run(tasks)):
        if result.ok:
            records.append({**pair, "response": result.text, "teacher": engine.endpoint.name})
        else:
            failures.append({"id": pair["id"], "error": result.error})
    return records, failures
