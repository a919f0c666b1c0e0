"""GREEN agreement with the teacher on held-out pairs (the paper's Table 2): parse rate, and mean absolute error of
the significant error counts (total and mean per category), of the insignificant error count, of matched findings
and of the GREEN score, each next to the MAE of a constant prediction, computed on the same parsed responses, and
Kendall tau-b of the GREEN score against the teacher's. The constant is
the teacher's training-set median, the constant with the smallest expected absolute error, so the baseline is the
strongest one a constant can be.

With `intervals`, 95% percentile bootstrap intervals resample the held-out pairs (parse rate, and the MAEs over the
pairs of each resample that parsed), and a paired bootstrap of model MAE minus constant MAE on the same pairs says
whether the model beats its constant (`beats_constant`): on a hundred pairs, a lower MAE alone is not a win.
Approximate randomisation gives that difference a p-value as well (`inference/scoring/stats.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from radmetrics.inference.files import atomic
from radmetrics.inference.metrics.green.format import parse_green_response, prompt_reports
from radmetrics.inference.metrics.green.generation import generate_green_responses
from radmetrics.inference.scoring.stats import bootstrap_ci, paired_comparison, scored_mean

BOOTSTRAP_RESAMPLES = 1000


class TeacherConstant(NamedTuple):
    """The constant prediction of each count (and of the GREEN score): the teacher's training-set median. The last two
    are optional so that a caller may pass (significant, matched) alone."""

    significant: float
    matched: float
    insignificant: float | None = None
    green: float | None = None


# (result key, what a parse counts, the matching TeacherConstant field)
COUNTS = (
    ("significant", lambda p: p.significant_total, "significant"),
    ("matched", lambda p: p.matched, "matched"),
    ("insignificant", lambda p: sum(p.insignificant), "insignificant"),
    ("green_score", lambda p: p.score, "green"),
)


def teacher_medians(train_records) -> TeacherConstant:
    parses = [p for p in map(parse_green_response, train_records["response"]) if p.parsed]  # an LLM teacher's can fail
    return TeacherConstant(*(float(np.median([count(p) for p in parses])) for _, count, _ in COUNTS))


def agreement_from_responses(
    responses: list[str], teacher_responses: list[str], constant: tuple, prefix: str = "", intervals: bool = False
) -> dict:
    """Parse rate, and over the pairs whose response parsed, the MAE of each count against the teacher next to the
    constant's (`COUNTS`, those `constant` has), the mean per-category MAE of the significant errors, and Kendall tau-b
    of the model's GREEN score against the teacher's. `intervals`: bootstrap intervals and paired tests (module doc).
    """
    constant = TeacherConstant(*constant)
    model = [parse_green_response(r) for r in responses]
    teacher = [parse_green_response(r) for r in teacher_responses]
    kept = [(m, t) for m, t in zip(model, teacher) if m.parsed and t.parsed]
    results = {
        f"{prefix}parse_rate": len(kept) / len(model) if model else float("nan"),
        f"{prefix}green_eval_pairs": len(model),
    }
    if intervals and model:
        parsed = np.array([m.parsed for m in model], dtype=float)
        results.update(_interval(f"{prefix}parse_rate", lambda idx: float(parsed[idx].mean()), len(model)))
    if not kept:
        return results
    counts = [
        (name, count, getattr(constant, field))
        for name, count, field in COUNTS
        if getattr(constant, field) is not None
    ]
    for name, count, constant_value in counts:
        pairs = np.array([[count(m), count(t)] for m, t in kept], dtype=float)
        results[f"{prefix}{name}_mae"] = float(np.abs(pairs[:, 0] - pairs[:, 1]).mean())
        results[f"{prefix}{name}_mae_constant_baseline"] = float(np.abs(constant_value - pairs[:, 1]).mean())
    results[f"{prefix}significant_category_mae"] = float(
        np.mean([np.abs(np.subtract(m.significant, t.significant)).mean() for m, t in kept])
    )
    results.update(_green_score_tau(kept, prefix, intervals))
    if intervals:
        results[f"{prefix}bootstrap_resamples"] = BOOTSTRAP_RESAMPLES
        for name, count, constant_value in counts:
            results.update(_model_and_constant_errors(f"{prefix}{name}", model, teacher, count, constant_value))
    return results


def _green_score_tau(kept, prefix: str, intervals: bool) -> dict:
    """Kendall tau-b of the model's GREEN score against the teacher's over the parsed pairs (with its bootstrap
    interval);
    absent when either side is constant, where tau is undefined."""
    from radmetrics.inference.scoring.stats import kendall_tau

    scores = np.array([[m.score, t.score] for m, t in kept], dtype=float)
    if len(scores) < 2 or len(np.unique(scores[:, 0])) < 2 or len(np.unique(scores[:, 1])) < 2:
        return {}
    tau = kendall_tau(scores[:, 0], scores[:, 1], "b", BOOTSTRAP_RESAMPLES if intervals else 0)
    return {
        f"{prefix}green_score_tau_b": tau["tau_b"],
        f"{prefix}green_score_tau_b_p_value": tau["p_value"],
        **(
            {
                f"{prefix}green_score_tau_b_ci95_low": tau["ci95"][0],
                f"{prefix}green_score_tau_b_ci95_high": tau["ci95"][1],
            }
            if intervals
            else {}
        ),
    }


def _interval(key: str, aggregate, n: int) -> dict:
    low, high = bootstrap_ci(aggregate, n, BOOTSTRAP_RESAMPLES)
    return {f"{key}_ci95_low": low, f"{key}_ci95_high": high}


def _model_and_constant_errors(key: str, model, teacher, count, constant_value: float) -> dict:
    """`key`_mae's bootstrap interval and the paired comparison with the constant, resampling all held-out pairs
    (an unparsed pair counts for neither, as in the MAEs)."""
    model_errors = np.array(
        [abs(count(m) - count(t)) if m.parsed and t.parsed else np.nan for m, t in zip(model, teacher)]
    )
    constant_errors = np.array(
        [abs(constant_value - count(t)) if m.parsed and t.parsed else np.nan for m, t in zip(model, teacher)]
    )
    both = np.concatenate([model_errors, constant_errors])
    paired = paired_comparison(lambda idx: scored_mean(both[idx]), len(model), BOOTSTRAP_RESAMPLES)
    return {
        **_interval(f"{key}_mae", lambda idx: scored_mean(model_errors[idx]), len(model)),
        f"{key}_mae_minus_constant": paired["difference"],
        f"{key}_mae_minus_constant_ci95_low": paired["ci95"][0],
        f"{key}_mae_minus_constant_ci95_high": paired["ci95"][1],
        f"{key}_mae_minus_constant_p_value": paired["p_value"],
    }


def beats_constant(results: dict, prefix: str = "test_", count: str = "significant") -> str:
    """A plain verdict on the paired comparison of `agreement_from_responses(..., intervals=True)`: "yes" when the
    whole 95% interval of (model MAE - constant MAE) lies below 0, "no" when the model's MAE is not lower, "not shown"
    otherwise (lower, but the interval reaches 0)."""
    key = f"{prefix}{count}_mae_minus_constant"
    if key not in results:
        return "not measured (no response parsed)"
    if results[key] >= 0:
        return "no"
    return "yes" if results[f"{key}_ci95_high"] < 0 else "not shown"


def write_generations(path: Path, records, responses: list[str]) -> None:
    """One line per held-out pair: the model's response next to the teacher's, with both parses."""
    with atomic.atomic_write(Path(path)) as out:
        for record, response in zip(records, responses):
            model, teacher = parse_green_response(response), parse_green_response(record["response"])
            out.write(
                json.dumps(
                    {
                        "id": record.get("id"),
                        "response": response,
                        "parsed": model.parsed,
                        "problems": model.problems,
                        "significant": model.significant,
                        "matched": model.matched,
                        "teacher_significant": teacher.significant,
                        "teacher_matched": teacher.matched,
                    }
                )
                + "\n"
            )


def green_agreement(
    model,
    tokenizer,
    records,
    constant: tuple[float, float],
    max_new_tokens: int = 512,
    prefix: str = "",
    batch_size: int = 16,
    generations_path: Path | None = None,
    across_ranks: bool = False,
    intervals: bool = False,
    prompt: str = "green",
) -> dict:
    """Generate GREEN analyses for `records` (reference, candidate, teacher response) and compare with the teacher;
    `constant` is the baseline's prediction (`teacher_medians` of the training split). With `generations_path`
    the responses are also written there (`write_generations`, main process). With `across_ranks`, each rank of the
    process group generates every world-size-th record and all of them receive every response. `intervals`: see
    `agreement_from_responses`. `prompt`: the one the model was trained with (`generation.green_messages`)."""
    from ..common.distributed import gather_to_all, is_main_process, rank_and_world

    if across_ranks:
        rank, world = rank_and_world()
        mine = list(range(rank, len(records), world))
        answered = _generate(model, tokenizer, records.select(mine), max_new_tokens, batch_size, prompt)
        responses = [text for _, text in sorted(gather_to_all(list(zip(mine, answered))))]
    else:
        responses = _generate(model, tokenizer, records, max_new_tokens, batch_size, prompt)
    if generations_path is not None and is_main_process():
        write_generations(generations_path, records, responses)
    return agreement_from_responses(responses, records["response"], constant, prefix, intervals)


def _generate(model, tokenizer, records, max_new_tokens: int, batch_size: int, prompt: str) -> list[str]:
    """Greedy responses with the KV cache (generation_cache.py), a progress bar on the main process."""
    from ..common.distributed import is_main_process
    from ..common.generation_cache import kv_cache_for_generation

    was_training = model.training
    model.eval()
    try:
        texts = [prompt_reports(record, prompt) for record in records]
        with kv_cache_for_generation(model):  # training keeps it off (packing masks)
            responses = generate_green_responses(
                model,
                tokenizer,
                [reference for reference, _ in texts],
                [candidate for _, candidate in texts],
                batch_size,
                max_new_tokens,
                progress=is_main_process(),
                shard=False,
                prompt=prompt,
            )
    finally:
        model.train(was_training)
    return responses
