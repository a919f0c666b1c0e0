"""Greedy generation through transformers' continuous batching (`model.generate_batch`, transformers >= 5): paged
attention over unpadded sequences, a finished answer's slot refilled at once, and a prompt prefix that several
requests share (GREEN's instructions) cached once. The drop-in for `local.generate_sorted` behind GREEN's
`engine="continuous"`: the same prompts, EOS and new-token budget, so its greedy answers are the padded path's
(tests/inference/test_green_engines.py checks this in fp32 on CPU). In bf16 on a GPU the two run other attention
kernels (paged; flash-attn when installed), so a near-tie can part them: benchmarks/gpu/green_scoring_throughput.py
reports their agreement. Logits processors that continuous batching lacks (an export's `repetition_penalty`, say) are
dropped by transformers with a warning.

On a GPU transformers sizes the paged cache from free memory and decides on CUDA graphs itself. On a CPU its memory
estimate is meant for a GPU, so the cache is sized here from the prompts.
"""

from __future__ import annotations

import math

from .local import cut_at_stop

PAGE_SIZE = 256


def continuous_batching_config(model, lengths: list[int], max_new_tokens: int, batch_size: int):
    """At most `batch_size` requests decoded together; on a CPU, a cache just large enough for them."""
    from transformers import ContinuousBatchingConfig

    if model.device.type == "cuda":
        return ContinuousBatchingConfig(max_requests_per_batch=batch_size)
    pages = [math.ceil((length + max_new_tokens) / PAGE_SIZE) for length in lengths]
    return ContinuousBatchingConfig(
        page_size=PAGE_SIZE,
        num_blocks=sum(sorted(pages, reverse=True)[:batch_size]) + 1,
        max_batch_tokens=max(lengths) + batch_size,
        max_requests_per_batch=batch_size,
    )


def generate_continuous(
    model, tokenizer, prompts: list[str], generation: dict, batch_size: int = 8, progress: bool = True
) -> list[tuple[str, int, int]]:
    """(text cut at the first stop string, prompt tokens, completion tokens) per prompt, in input order, as
    `generate_sorted` returns them. Greedy only: a temperature above 0 is refused."""
    import copy

    if float(generation.get("temperature") or 0.0) > 0:
        raise ValueError("the continuous engine decodes greedily; use engine=generate for sampling")
    if not prompts:
        return []
    inputs = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    max_new_tokens = int(generation.get("max_tokens") or 512)
    config = copy.deepcopy(model.generation_config)  # the EOS ids `generate` stops at
    config.update(max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    cb_config = continuous_batching_config(model, [len(i) for i in inputs], max_new_tokens, batch_size)
    outputs = model.generate_batch(
        inputs,
        generation_config=config,
        continuous_batching_config=cb_config,
        progress_bar=progress,
        warmup=model.device.type == "cuda",
    )
    results = []
    for i, prompt_ids in enumerate(inputs):
        output = outputs.get(f"req_{i}")
        if output is None or output.error:
            reason = "no result" if output is None else output.error
            raise RuntimeError(f"continuous batching failed on prompt {i}: {reason}")
        new = [t for t in output.generated_tokens if t != tokenizer.pad_token_id]
        text = cut_at_stop(tokenizer.decode(new, skip_special_tokens=True), generation.get("stop"))
        results.append((text, len(prompt_ids), len(new)))
    return results
