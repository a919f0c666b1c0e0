"""A CRIMSON student against its teacher on held-out pairs: parse rate (answers the reference's parser reads and can
score) and, over the pairs that parsed, the mean absolute error of the CRIMSON score and of each weighted error count
beside a constant's (the teacher's training-set median score, the constant with the smallest expected absolute
error), with bootstrap intervals and a paired comparison of model against constant on the same pairs
(`radmetrics.inference.scoring.stats`), and Kendall tau-b of the student's score against the teacher's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from radmetrics.inference.files import atomic
from radmetrics.inference.llm.local import generate_sorted, render_prompt
from radmetrics.inference.metrics.crimson.metric import evaluate_answer
from radmetrics.inference.metrics.crimson.parse import CrimsonParseError
from radmetrics.inference.scoring.stats import bootstrap_ci, kendall_tau, paired_comparison, scored_mean

from ..common.generation_cache import kv_cache_for_generation

BOOTSTRAP_RESAMPLES = 1000
WEIGHTED = ("false_findings", "missing_findings", "attribute_errors")


def scored_or_none(text: str) -> dict | None:
    try:
        return evaluate_answer(text)[1]
    except CrimsonParseError:
        return None


def teacher_median(train_records: list[dict]) -> float:
    return float(np.median([r["crimson_score"] for r in train_records]))


def agreement(answers: list[str], records: list[dict], constant: float, prefix: str = "") -> dict:
    """The module's figures for the student's `answers` to `records` (each with the teacher's `response`)."""
    student = [scored_or_none(a) for a in answers]
    teacher = [evaluate_answer(r["response"])[1] for r in records]
    n = len(records)
    parsed = np.array([s is not None for s in student], dtype=float)
    results = {f"{prefix}pairs": n, f"{prefix}parse_rate": float(parsed.mean()) if n else float("nan")}
    if not n:
        return results
    low, high = bootstrap_ci(lambda idx: float(parsed[idx].mean()), n, BOOTSTRAP_RESAMPLES)
    results.update({f"{prefix}parse_rate_ci95_low": low, f"{prefix}parse_rate_ci95_high": high})
    model_error = np.array(
        [abs(s["crimson_score"] - t["crimson_score"]) if s else np.nan for s, t in zip(student, teacher)]
    )
    constant_error = np.array([abs(constant - t["crimson_score"]) if s else np.nan for s, t in zip(student, teacher)])
    if np.isnan(model_error).all():
        return results
    both = np.concatenate([model_error, constant_error])
    paired = paired_comparison(lambda idx: scored_mean(both[idx]), n, BOOTSTRAP_RESAMPLES)
    low, high = bootstrap_ci(lambda idx: scored_mean(model_error[idx]), n, BOOTSTRAP_RESAMPLES)
    results.update(
        {
            f"{prefix}score_mae": scored_mean(model_error),
            f"{prefix}score_mae_ci95_low": low,
            f"{prefix}score_mae_ci95_high": high,
            f"{prefix}score_mae_constant_baseline": scored_mean(constant_error),
            f"{prefix}score_mae_minus_constant": paired["difference"],
            f"{prefix}score_mae_minus_constant_ci95_low": paired["ci95"][0],
            f"{prefix}score_mae_minus_constant_ci95_high": paired["ci95"][1],
            f"{prefix}beats_constant": bool(paired["ci95"][1] < 0),
        }
    )
    for key in WEIGHTED:
        errors = [
            abs(s["weighted_error_counts"][key] - t["weighted_error_counts"][key])
            for s, t in zip(student, teacher)
            if s
        ]
        results[f"{prefix}weighted_{key}_mae"] = float(np.mean(errors))
    pairs = np.array([[s["crimson_score"], t["crimson_score"]] for s, t in zip(student, teacher) if s], dtype=float)
    if len(pairs) > 1 and len(np.unique(pairs[:, 0])) > 1 and len(np.unique(pairs[:, 1])) > 1:
        results[f"{prefix}score_tau_b"] = kendall_tau(pairs[:, 0], pairs[:, 1], "b", 0)["tau_b"]
    return results


def student_answers(
    model, tokenizer, records: list[dict], conversation, max_new_tokens: int, batch_size: int = 8
) -> list[str]:
    """Greedy answers of `model` to `records`, each rendered by `conversation(record)` and the model's chat template;
    under a launcher, each rank answers its share and every rank gets all answers in order."""
    from ..common.distributed import gather_to_all, rank_and_world

    rank, world = rank_and_world()
    mine = list(range(rank, len(records), world))
    prompts = [render_prompt(tokenizer, conversation(records[i])) for i in mine]
    generation = {"temperature": 0.0, "max_tokens": max_new_tokens}
    with kv_cache_for_generation(model):
        answers = [text for text, _, _ in generate_sorted(model, tokenizer, prompts, generation, batch_size)]
    gathered = dict(gather_to_all(list(zip(mine, answers))))
    return [gathered[i] for i in range(len(records))]


def write_generations(path: Path, records: list[dict], answers: list[str]) -> None:
    with atomic.atomic_write(path) as fh:
        for record, answer in zip(records, answers):
            fh.write(json.dumps({"id": record.get("id"), "answer": answer, "teacher": record["response"]}) + "\n")
