"""The KV cache on for an evaluation's generations, off again for training.

A causal LM is trained with `use_cache=False` (causal_lm.py), and that value is saved in its config and in its
`generation_config`, which `model.generate` reads over `model.config` (transformers 5). Setting
`model.config.use_cache` alone left the final evaluation decoding without a cache: each new token recomputed the whole
prompt and answer (8x the CPU time of the cached decode for 96 new tokens, batch 8, of the tiny GREEN model)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def kv_cache_for_generation(model):
    """`model` generates with its KV cache inside the block; its config and generation config are restored after."""
    generation_config = getattr(model, "generation_config", None)
    saved = (model.config.use_cache, getattr(generation_config, "use_cache", None))
    model.config.use_cache = True
    if generation_config is not None:
        generation_config.use_cache = True
    try:
        yield model
    finally:
        model.config.use_cache = saved[0]
        if generation_config is not None:
            generation_config.use_cache = saved[1]
