"""What both GREEN stages share: causal-LM arguments, tokenizer and model construction.

`model_name_or_path: tiny-llama` builds a random 2-layer Llama with a byte-level BPE tokenizer trained on the
training text (CPU tests and the `tiny` configs); anything else is a local path or Hub id (local first). The
attention implementation is flash-attn 2 when the package is installed and a GPU is present, else PyTorch SDPA (the
fp32 tiny model always takes SDPA unless asked otherwise); the GPU configs name flash_attention_2 explicitly, so a
missing kernel fails at load instead of training slowly.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from ..common.distributed import build_once

TINY = "tiny-llama"

# Used when the tokenizer has no chat template (base models such as phi-2, llama-2-7b, mistral-7b and the tiny
# model). The prompt rendered with the generation prompt is a prefix of the full conversation, which TRL's
# completion-only loss needs; the assistant turn ends with the EOS token so the model learns to stop.
GREEN_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}"
    "{% if message['role'] == 'assistant' %}{{ eos_token }}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


@dataclass
class CausalLMArguments:
    model_name_or_path: str = field(
        default=TINY,
        metadata={"help": "local path or Hub id of a causal LM (stage 2: the stage-1 run's final/), or tiny-llama"},
    )
    tiny_vocab_size: int = field(default=2000, metadata={"help": "vocabulary of the tiny BPE tokenizer"})
    tiny_hidden_size: int = field(default=64, metadata={"help": "hidden size of the tiny Llama"})
    tiny_layers: int = field(default=2, metadata={"help": "layers of the tiny Llama"})
    attn_implementation: str = field(
        default="auto",
        metadata={
            "help": "auto (flash_attention_2 when installed on a GPU, else sdpa), flash_attention_2, sdpa or eager"
        },
    )
    dtype: str = field(
        default="auto", metadata={"help": "auto (bf16 on GPU, fp32 on CPU), bfloat16, float16, float32"}
    )


def attention_implementation(requested: str = "auto") -> str:
    import torch

    if requested != "auto":
        return requested
    if torch.cuda.is_available() and importlib.util.find_spec("flash_attn") is not None:
        return "flash_attention_2"
    return "sdpa"


def torch_dtype(requested: str = "auto"):
    import torch

    from radmetrics.inference.loading.hub import default_dtype

    return default_dtype() if requested == "auto" else getattr(torch, requested)


def build_causal_tokenizer(args: CausalLMArguments, texts, output_dir: str | Path):
    """The tiny BPE tokenizer (trained once per run, reused on resume) or the model's own; a chat template is
    added when the tokenizer has none, and a pad token when it lacks one."""
    from radmetrics.inference.loading.hub import load_tokenizer

    if args.model_name_or_path == TINY:
        from radmetrics.inference.metrics.green.format import green_prompt, render_green_response

        from ..tiny import train_bpe_tokenizer

        # The GREEN prompt and response format join the report text, so their words get merges of their own.
        template = [green_prompt("", ""), render_green_response("", {}, {}, [])] * 200
        directory = Path(output_dir) / "tokenizer"
        build_once(
            directory, lambda: train_bpe_tokenizer([*texts, *template], directory, vocab_size=args.tiny_vocab_size)
        )
        tokenizer = load_tokenizer(directory, min_vocab=50)
    else:
        tokenizer = load_tokenizer(args.model_name_or_path)
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = GREEN_CHAT_TEMPLATE
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def base_model_source(model_name_or_path: str):
    """Where the base weights came from, for the run manifest: what `dequantise_gguf` recorded about the directory, or,
    for a stage-1 run's final/, the source that run recorded (with the run's path), else "as published"; None for the
    tiny model. Stage 2 from a stage 1 that started from a dequantised GGUF so still says so."""
    import json

    from radmetrics.inference.loading.gguf import read_gguf_source
    from radmetrics.inference.loading.hub import resolve_model_path

    if model_name_or_path == TINY:
        return None
    directory = Path(resolve_model_path(model_name_or_path))
    source = read_gguf_source(directory)
    manifest = directory.parent / "radmetrics_run.json"
    if source is None and directory.name == "final" and manifest.is_file():
        recorded = json.loads(manifest.read_text(encoding="utf-8")).get("data_provenance", {}).get("base_model_source")
        if isinstance(recorded, dict):
            source = {**recorded, "stage1_run": str(directory.parent)}
    return source or "as published"


def build_causal_lm(args: CausalLMArguments, tokenizer, quantization_config=None):
    """A tiny random Llama or the pretrained model, with the chosen attention; `use_cache` off for training:
    with a KV cache, transformers does not build the block-diagonal mask that keeps packed documents apart."""
    from transformers import AutoModelForCausalLM

    from radmetrics.inference.loading.hub import resolve_model_path

    from ..tiny import tiny_llama_config

    attention = attention_implementation(args.attn_implementation)
    if args.model_name_or_path == TINY and args.attn_implementation == "auto":
        attention = "sdpa"  # the tiny model is built in fp32, which flash-attn refuses
    if args.model_name_or_path == TINY:
        config = tiny_llama_config(
            len(tokenizer),
            tokenizer.pad_token_id,
            tokenizer.bos_token_id,
            tokenizer.eos_token_id,
            hidden_size=args.tiny_hidden_size,
            num_hidden_layers=args.tiny_layers,
            use_cache=False,
        )
        model = model_from_config(config, attention)
    else:
        model = AutoModelForCausalLM.from_pretrained(
            resolve_model_path(args.model_name_or_path),
            dtype=torch_dtype(args.dtype),
            attn_implementation=attention,
            quantization_config=quantization_config,
        )
        model.config.use_cache = False
    return model


def model_from_config(config, attention: str, dtype=None, device: str | None = None):
    """Random weights of `config`'s architecture (the tiny model; benchmarks/gpu/sft_throughput.py's shapes), built
    on `device` directly so that a 7B shape never passes through CPU memory."""
    import contextlib

    import torch
    from transformers import AutoModelForCausalLM

    with torch.device(device) if device else contextlib.nullcontext():
        return AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attention)
