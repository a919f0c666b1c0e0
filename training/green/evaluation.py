"""GREEN agreement with the teacher on held-out pairs (the paper's Table 2): parse rate, and mean absolute error of
the significant error counts (total and mean per category) and of matched findings, each next to the MAE of a
constant prediction, computed on the same parsed responses. The constant is the teacher's training-set median,
the constant with the smallest expected absolute error, so the baseline is the strongest one a constant can be."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from radmetrics.inference.metrics.green.format import parse_green_response
from radmetrics.inference.metrics.green.generation import generate_green_responses


def teacher_medians(train_records) -> tuple[float, float]:
    parses = [parse_green_response(r) for r in train_records["response"]]
    return float(np.median([p.significant_total for p in parses])), float(np.median([p.matched for p in parses]))


def agreement_from_responses(responses: list[str], teacher_responses: list[str], constant: tuple[float, float], prefix: str = "") -> dict:
    model = [parse_green_response(r) for r in responses]
    teacher = [parse_green_response(r) for r in teacher_responses]
    kept = [(m, t) for m, t in zip(model, teacher) if m.parsed]
    results = {f"{prefix}parse_rate": len(kept) / len(model) if model else float("nan"), f"{prefix}green_eval_pairs": len(model)}
    if not kept:
        return results
    significant = np.array([[m.significant_total, t.significant_total] for m, t in kept], dtype=float)
    matched = np.array([[m.matched, t.matched] for m, t in kept], dtype=float)
    per_category = np.array([np.abs(np.subtract(m.significant, t.significant)).mean() for m, t in kept])
    results.update({
        f"{prefix}significant_mae": float(np.abs(significant[:, 0] - significant[:, 1]).mean()),
        f"{prefix}significant_mae_constant_baseline": float(np.abs(constant[0] - significant[:, 1]).mean()),
        f"{prefix}significant_category_mae": float(per_category.mean()),
        f"{prefix}matched_mae": float(np.abs(matched[:, 0] - matched[:, 1]).mean()),
        f"{prefix}matched_mae_constant_baseline": float(np.abs(constant[1] - matched[:, 1]).mean()),
    })
    return results


def write_generations(path: Path, records, responses: list[str]) -> None:
    """One line per held-out pair: the model's response next to the teacher's, with both parses."""
    with Path(path).open("w", encoding="utf-8") as out:
        for record, response in zip(records, responses):
            model, teacher = parse_green_response(response), parse_green_response(record["response"])
            out.write(json.dumps({"id": record.get("id"), "response": response, "parsed": model.parsed, "problems": model.problems,
                                  "significant": model.significant, "matched": model.matched,
                                  "teacher_significant": teacher.significant, "teacher_matched": teacher.matched}) + "\n")


def green_agreement(model, tokenizer, records, constant: tuple[float, float], max_new_tokens: int = 512, prefix: str = "",
                    batch_size: int = 16, generations_path: Path | None = None, across_ranks: bool = False) -> dict:
    """Generate GREEN analyses for `records` (reference, candidate, teacher response) and compare with the teacher;
    `constant` is the baseline's prediction (`teacher_medians` of the training split). With `generations_path`
    the responses are also written there (`write_generations`, main process). With `across_ranks`, each rank of the
    process group generates every world-size-th record and all of them receive every response."""
    from ..encoder_recipe import gather_to_all, is_main_process, rank_and_world

    if across_ranks:
        rank, world = rank_and_world()
        mine = list(range(rank, len(records), world))
        answered = _generate(model, tokenizer, records.select(mine), max_new_tokens, batch_size)
        responses = [text for _, text in sorted(gather_to_all(list(zip(mine, answered))))]
    else:
        responses = _generate(model, tokenizer, records, max_new_tokens, batch_size)
    if generations_path is not None and is_main_process():
        write_generations(generations_path, records, responses)
    return agreement_from_responses(responses, records["response"], constant, prefix)


def _generate(model, tokenizer, records, max_new_tokens: int, batch_size: int) -> list[str]:
    was_training = model.training
    model.eval()
    cache = model.config.use_cache
    model.config.use_cache = True  # generation wants the KV cache; training keeps it off (packing masks)
    try:
        responses = generate_green_responses(model, tokenizer, records["reference"], records["candidate"], batch_size,
                                             max_new_tokens, progress=False, shard=False)
    finally:
        model.config.use_cache = cache
        model.train(was_training)
    return responses
