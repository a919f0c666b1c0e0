"""GREEN SFT training throughput (tokens/s) and model FLOPs utilisation (MFU) on one GPU.

    python benchmarks/gpu/sft_throughput.py --shape phi-2
    python benchmarks/gpu/sft_throughput.py --shape llama-2-7b --activation-checkpointing --batch-size 4
    python benchmarks/gpu/sft_throughput.py --shape mistral-7b --activation-checkpointing --batch-size 4
    python benchmarks/gpu/sft_throughput.py --shape tiny --steps 3                          # CPU smoke run, seconds

Model: random weights of the named architecture (its config only; nothing is downloaded), parameters,
gradients and AdamW states all in bf16 (fp32 master weights and Adam states of a 7B model, 16 bytes a
parameter, do not fit on one 80 GB GPU; the recipes' AMP + ZeRO-3 spread them over several), flash-attn 2 when
installed (else SDPA), activation checkpointing (non-reentrant) with --activation-checkpointing.
Data: GREEN SFT conversations (programmatic-teacher pairs of the bundled IU reports in the recipe's chat format,
tokenised with a BPE trained on them), packed whole into rows of at most --seq-len tokens; each step's rows are
flattened into one padding-free sequence (DataCollatorWithFlattening: position ids restart at every document,
flash-attn varlen kernels, no attention across documents), loss on every token.
Timing: --warmup steps, then --steps steps (forward, backward, AdamW step) between two CUDA synchronisations.

MFU = model FLOPs per second / the GPU's dense bf16 peak. Model FLOPs per token = 6 N + 12 L H Q T (PaLM,
Chowdhery et al. 2022, appendix B; torchtitan's get_num_flop_per_token): N the parameters except the input
embedding table (the output projection multiplies every token, so it counts, tied or not), L layers, H query
heads of Q dimensions, T = --seq-len. By that convention attention is counted as if non-causal and activation
recomputation is not counted (checkpointing lowers MFU). `mfu_document_attention` counts attention over each
packed document's own length instead (12 L H Q sum(l^2) a step), the attention that packing computes.
Peak: radmetrics.training.common.throughput's table from torch.cuda.get_device_name (NVIDIA datasheets, dense = half
the sparsity figure; the same values as torchtitan's table), or --peak-tflops. The FLOP count is the one the recipes
log during training (training/common/throughput.py). Goal to compare against: 45% MFU.
Writes benchmarks/results/sft_throughput_<shape>.json (or --out) with the device, command and figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

from radmetrics.training.common.throughput import (
    document_attention_flops,
    flops_per_token,
    matmul_parameters,
    peak_tflops,
)

ROOT = Path(__file__).resolve().parents[2]
MFU_GOAL = 0.45

# (transformers config class, sizes as in the released model's config.json, default packed rows a step on 80 GB)
SHAPES = {
    "tiny": (
        "LlamaConfig",
        dict(
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=4096,
        ),
        1,
    ),
    "phi-2": (
        "PhiConfig",
        dict(
            vocab_size=51200,
            hidden_size=2560,
            intermediate_size=10240,
            num_hidden_layers=32,
            num_attention_heads=32,
            partial_rotary_factor=0.4,
            rope_theta=10000.0,
            hidden_act="gelu_new",
            resid_pdrop=0.1,
            max_position_embeddings=2048,
        ),
        4,
    ),
    "llama-2-7b": (
        "LlamaConfig",
        dict(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=11008,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
            max_position_embeddings=4096,
            rms_norm_eps=1e-5,
        ),
        1,
    ),
    "mistral-7b": (
        "MistralConfig",
        dict(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            max_position_embeddings=32768,
            rope_theta=10000.0,
            sliding_window=4096,
            rms_norm_eps=1e-5,
        ),
        1,
    ),
}

MEAN_DOCUMENT_TOKENS = 800  # about what the GREEN conversations measure with this tokeniser


def pack(documents: list[list[int]], seq_len: int) -> list[list[list[int]]]:
    """Whole documents, in order, into rows of at most `seq_len` tokens; longer documents are dropped (the SFT
    recipe drops them too, never cuts them)."""
    rows, row, used = [], [], 0
    for document in documents:
        if len(document) > seq_len:
            continue
        if used + len(document) > seq_len:
            rows.append(row)
            row, used = [], 0
        row.append(document)
        used += len(document)
    return rows + [row] if row else rows


def green_documents(workdir: Path, tokens: int) -> tuple[list[list[int]], int]:
    """(token ids of about `tokens` tokens of GREEN SFT conversations: prompt and teacher response in the recipe's
    chat format, vocabulary size)."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.data_builders.pairs.programmatic_teacher import programmatic_annotation
    from radmetrics.inference.metrics.green.generation import green_messages
    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_tokenizer

    reports = iu_xray_corpus()
    heuristics = ("random", "remove_shuffle", "recombine")
    per_heuristic = tokens // (MEAN_DOCUMENT_TOKENS * len(heuristics)) + 1
    pairs = build_pairs(reports, assign_splits(reports), heuristics, per_heuristic, progress=False)
    records = [programmatic_annotation(pair) for pair in pairs]
    tokenizer = build_causal_tokenizer(
        CausalLMArguments(tiny_vocab_size=4000), [r.text for r in reports[:1000]], workdir
    )
    texts = [
        tokenizer.apply_chat_template(
            green_messages(r["reference"], r["candidate"]) + [{"role": "assistant", "content": r["response"]}],
            tokenize=False,
        )
        for r in records
    ]
    return [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts], len(tokenizer)


def model_config(shape: str, tokenizer_vocab: int):
    import transformers

    class_name, sizes, _ = SHAPES[shape]
    vocab = {"vocab_size": tokenizer_vocab} if shape == "tiny" else {}
    return getattr(transformers, class_name)(**sizes, **vocab, use_cache=False)


def build_model(config, device: str, attention: str, activation_checkpointing: bool):
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation=attention)
    if activation_checkpointing:
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    return model.train()


def step_batches(rows: list[list[list[int]]], rows_per_step: int, steps: int, flash: bool, device: str):
    """(batch, document lengths) for each step: `rows_per_step` rows (cycling through them) flattened into one
    padding-free sequence."""
    from transformers import DataCollatorWithFlattening

    collator = DataCollatorWithFlattening(return_position_ids=True, return_flash_attn_kwargs=flash)
    batches = []
    for step in range(steps):
        documents = [d for i in range(rows_per_step) for d in rows[(step * rows_per_step + i) % len(rows)]]
        batch = collator([{"input_ids": d} for d in documents])
        batches.append(
            ({k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}, [len(d) for d in documents])
        )
    return batches


def train_steps(model, optimizer, batches) -> list:
    losses = []
    for batch, _ in batches:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    return losses


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="phi-2", choices=list(SHAPES))
    parser.add_argument("--seq-len", type=int, default=2048, help="tokens per packed row")
    parser.add_argument("--batch-size", type=int, help="packed rows per step (default: the shape's, sized for 80 GB)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--activation-checkpointing", action=argparse.BooleanOptionalAction, default=False)
    parser.add_argument(
        "--attention", default="auto", help="auto (flash_attention_2 when installed, else sdpa), or a name"
    )
    parser.add_argument("--peak-tflops", type=float, help="the GPU's dense bf16 peak (default: from the device name)")
    parser.add_argument(
        "--out", type=Path, help="result JSON (default benchmarks/results/sft_throughput_<shape>.json)"
    )
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    os.environ.setdefault("PYTORCH_ALLOC_CONF", "expandable_segments:True")  # less fragmentation near the memory limit
    import torch

    from radmetrics.training.green.causal_lm import attention_implementation

    args = parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and args.shape != "tiny":
        sys.exit(
            f"sft_throughput: --shape {args.shape} needs a CUDA GPU; without one only --shape tiny runs (a smoke test)"
        )
    rows_per_step = args.batch_size or SHAPES[args.shape][2]
    attention = attention_implementation(args.attention)
    with tempfile.TemporaryDirectory() as workdir:
        documents, vocab = green_documents(Path(workdir), (args.warmup + args.steps) * rows_per_step * args.seq_len)
    rows = pack(documents, args.seq_len)
    if not rows:
        sys.exit(
            f"sft_throughput: no GREEN conversation fits in {args.seq_len} tokens (they have"
            f" {min(map(len, documents))} or more)"
        )
    config = model_config(args.shape, vocab)
    model = build_model(config, device, attention, args.activation_checkpointing)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=device == "cuda")
    batches = step_batches(rows, rows_per_step, args.warmup + args.steps, attention == "flash_attention_2", device)
    try:
        losses = train_steps(model, optimizer, batches[: args.warmup])
        synchronize(device)
        start = time.perf_counter()
        losses += train_steps(model, optimizer, batches[args.warmup :])
        synchronize(device)
    except torch.OutOfMemoryError:
        sys.exit(
            f"sft_throughput: out of GPU memory with {rows_per_step} row(s) of {args.seq_len} tokens a step; "
            "try --activation-checkpointing or a smaller --batch-size"
        )
    seconds = time.perf_counter() - start
    command = ["python", "benchmarks/gpu/sft_throughput.py", *(sys.argv[1:] if argv is None else argv)]
    result = summarise(
        args, model, config, batches[args.warmup :], seconds, losses, device, attention, rows_per_step, command
    )
    out = args.out or ROOT / "benchmarks" / "results" / f"sft_throughput_{args.shape}.json"
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


def device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return torch.cuda.get_device_name(0)
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def summarise(args, model, config, timed, seconds, losses, device, attention, rows_per_step, command) -> dict:
    import torch

    name = device_name(device)
    tokens = sum(sum(lengths) for _, lengths in timed)
    n_params = matmul_parameters(model)
    model_flops = flops_per_token(n_params, config, args.seq_len) * tokens
    document_flops = 6 * n_params * tokens + sum(document_attention_flops(config, lengths) for _, lengths in timed)
    peak = args.peak_tflops or (peak_tflops(name) if device == "cuda" else None)

    def mfu(flops: float) -> float | None:
        return round(flops / seconds / (peak * 1e12), 4) if peak else None

    loss = torch.stack(losses).float()
    return {
        "shape": args.shape,
        "device": name,
        "command": shlex.join(command),
        "versions": versions("torch", "transformers", "flash-attn"),
        "dtype": "bfloat16 (parameters, gradients, AdamW states)",
        "attention": attention,
        "activation_checkpointing": args.activation_checkpointing,
        "seq_len": args.seq_len,
        "rows_per_step": rows_per_step,
        "warmup_steps": args.warmup,
        "steps": args.steps,
        "parameters": sum(p.numel() for p in model.parameters()),
        "matmul_parameters": n_params,
        "tokens_per_step": round(tokens / args.steps, 1),
        "documents_per_step": round(sum(len(lengths) for _, lengths in timed) / args.steps, 2),
        "seconds": round(seconds, 3),
        "tokens_per_s": round(tokens / seconds, 1),
        "flops_formula": "6*N + 12*L*H*Q*T per token (PaLM appendix B); N excludes the input embedding only",
        "model_flops_per_token": flops_per_token(n_params, config, args.seq_len),
        "achieved_tflops": round(model_flops / seconds / 1e12, 2),
        "peak_tflops": peak,
        "peak_source": "--peak-tflops" if args.peak_tflops else ("device-name table" if peak else None),
        "mfu": mfu(model_flops),
        "mfu_document_attention": mfu(document_flops),
        "mfu_goal": MFU_GOAL,
        "loss_first": round(float(loss[0]), 4),
        "loss_last": round(float(loss[-1]), 4),
        "loss_finite": bool(torch.isfinite(loss).all()),
        "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None,
    }


def versions(*packages: str) -> dict:
    import importlib.metadata as metadata

    found = {}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


if __name__ == "__main__":
    main()
