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


def test_a_composite_config_without_its_own_use_cache_is_set_through_its_text_config():
    """MedGemma's image-text `Gemma3Config` carries `use_cache` only on its text config: the block must not read the
    missing attribute (the crimson/sft medgemma-4b-lora rehearsal's final evaluation failed on it) and must set and
    restore the text config's."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    text = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    text.update(num_key_value_heads=1, head_dim=16, query_pre_attn_scalar=16, sliding_window=16, use_cache=False)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=28)
    config = Gemma3Config(text_config=text, vision_config={**vision, "patch_size": 14}, mm_tokens_per_image=1)
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(config).eval()
    model.generation_config.use_cache = False
    assert not hasattr(model.config, "use_cache")
    with kv_cache_for_generation(model):
        assert model.config.get_text_config().use_cache is True and model.generation_config.use_cache is True
    assert model.config.get_text_config().use_cache is False and model.generation_config.use_cache is False
    assert not hasattr(model.config, "use_cache")
