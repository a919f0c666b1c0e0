"""The KV cache on for an evaluation's generations, off again for training.

A causal LM is trained with `use_cache=False` (causal_lm.py), and that value is saved in its config and in its
`generation_config`, which `model.generate` reads over `model.config` (transformers 5). Setting
`model.config.use_cache` alone left the final evaluation decoding without a cache: each new token recomputed the whole
prompt and answer (8x the CPU time of the cached decode for 96 new tokens, batch 8, of the tiny GREEN model).

A composite config (Gemma 3's image-text `Gemma3Config`, MedGemma's) has no `use_cache` of its own: it lives on the
text config (`config.get_text_config()`), so every config that carries the attribute is set, and only those."""

from __future__ import annotations

from contextlib import contextmanager

_ABSENT = object()


def _configs_with_use_cache(model) -> list:
    """The model's config, its text config and its generation config: those of them that carry `use_cache`."""
    config = model.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    candidates = [config, text_config, getattr(model, "generation_config", None)]
    unique = []
    for candidate in candidates:
        if candidate is not None and all(candidate is not seen for seen in unique):
            unique.append(candidate)
    return [c for c in unique if getattr(c, "use_cache", _ABSENT) is not _ABSENT]


@contextmanager
def kv_cache_for_generation(model):
    """`model` generates with its KV cache inside the block; its configs are restored after."""
    configs = _configs_with_use_cache(model)
    saved = [(c, c.use_cache) for c in configs]
    for config in configs:
        config.use_cache = True
    try:
        yield model
    finally:
        for config, value in saved:
            config.use_cache = value
