"""An evaluation's generations decode with the KV cache even when the model was saved from training with
`use_cache=False` in its config and generation config (training/common/generation_cache.py)."""

import torch

from radmetrics.training.common.generation_cache import kv_cache_for_generation
from radmetrics.training.tiny import tiny_llama_config


def tokens_fed_per_step(model, prompt) -> list[int]:
    """How many positions each forward pass of `model.generate` reads (1 after the prompt when it uses its cache)."""
    seen = []
    hook = model.model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    try:
        with torch.no_grad():
            model.generate(prompt, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0)
    finally:
        hook.remove()
    return seen


def test_generation_inside_the_block_reads_one_new_position_per_step_and_the_settings_come_back():
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(tiny_llama_config(50, 0, 1, 2, use_cache=False)).eval()
    model.generation_config.use_cache = False  # as a run saved from training has it
    prompt = torch.tensor([[1, 5, 6, 7, 8]])
    assert tokens_fed_per_step(model, prompt) == [5, 6, 7, 8]  # no cache: the whole sequence again at every step
    with kv_cache_for_generation(model):
        assert tokens_fed_per_step(model, prompt) == [5, 1, 1, 1]
    assert model.config.use_cache is False and model.generation_config.use_cache is False
