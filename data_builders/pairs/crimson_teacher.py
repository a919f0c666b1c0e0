"""CRIMSON teacher annotations through the LLM engine: each pair gets the prompt crimson-score 0.2.0 sends an API model
(its system message, the full prompt with the guideline sections, the pair's patient context when it has one) with the
reference's request settings (seed 42, temperature 0, a JSON object answer); an answer is kept only if the reference's
parser reads it and its score can be computed, else the pair is listed as failed (re-prompted first when the engine
allows it). Every answer is cached by the engine, so an interrupted run re-sends nothing when started again.

Each record is the pair (`id`, `split`, `reference`, `candidate`, `context` when given) with the teacher's `response`,
its `crimson_score` and `teacher` (the endpoint's name): what the `crimson/sft` recipe trains on.
"""

from __future__ import annotations

from radmetrics.inference.llm.engine import LLMEngine, LLMTask
from radmetrics.inference.metrics.crimson.metric import REFERENCE_REQUEST, evaluate_answer
from radmetrics.inference.metrics.crimson.prompt import crimson_messages


def annotate_crimson(pairs: list[dict], engine: LLMEngine) -> tuple[list[dict], list[dict]]:
    """(records, failures) of the CRIMSON teacher on `pairs` (`reference`, `candidate`, optional `context`)."""
    engine.generation = dict(REFERENCE_REQUEST)
    tasks = [
        LLMTask(
            f"crimson-{p['id']}",
            crimson_messages(p["reference"], p["candidate"], p.get("context") or None, guidelines=True),
            evaluate_answer,
        )
        for p in pairs
    ]
    records, failures = [], []
    for pair, result in zip(pairs, engine.run(tasks)):
        if result.ok:
            _, scored = result.parsed
            records.append(
                {
                    **pair,
                    "response": result.text,
                    "crimson_score": scored["crimson_score"],
                    "teacher": engine.endpoint.name,
                }
            )
        else:
            failures.append({"id": pair["id"], "error": result.error})
    return records, failures
