"""GREEN scoring throughput (reports/s): batched greedy generation of GREEN analyses for IU report pairs.

    # an exported GREEN model
    python benchmarks/gpu/green_scoring_throughput.py --model exports/green --pairs 64
    # random tiny Llama (CPU)
    python benchmarks/gpu/green_scoring_throughput.py --shape tiny --pairs 64
    # random 7B-shaped Llama (one GPU, bf16)
    python benchmarks/gpu/green_scoring_throughput.py --shape 7b --pairs 256 --batch-size 32
    # the small recipe's shape (GPU)
    python benchmarks/gpu/green_scoring_throughput.py --shape smollm2-135m --pairs 256 --batch-size 64

Random weights generate until the new-token budget, so every report costs `--max-new-tokens` tokens: the
figure is the generation cost per report at that budget, not the speed of a trained model that stops early.
The FLOP ceiling: a report's forward FLOPs are 2 N T + 4 L H Q T^2 for its T = prompt + new tokens (N, L, H Q as in
training/common/throughput.py; the forward third of PaLM's count), so the GPU's dense bf16 peak allows at most
peak / FLOPs reports/s. Decoding is bound by memory bandwidth long before that, so the share of the ceiling
reached says how far batching brings generation towards compute-bound work.
Writes benchmarks/results/green_scoring_throughput_<shape or export folder name>.json with the device it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
from pathlib import Path

# before torch is imported: a 7B KV cache grown by torch.cat fragments
os.environ.setdefault("PYTORCH_ALLOC_CONF", "expandable_segments:True")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the shared helper `common`
from common import decoder_shape, device_name  # noqa: E402

from radmetrics.data_builders.corpus.corpora import iu_xray_corpus  # noqa: E402
from radmetrics.inference.llm.local import render_prompt  # noqa: E402
from radmetrics.inference.metrics.green.generation import (  # noqa: E402
    ENGINES,
    generate_green_responses,
    green_messages,
    load_green_model,
)

TARGET_REPORTS_PER_S = 20  # for the 7B shape on one H100 or H200; the long-term goal is 40


def random_llama(shape: str):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.inference.loading.hub import default_dtype, inference_device
    from radmetrics.training.green.causal_lm import attention_implementation
    from radmetrics.training.tiny import train_bpe_tokenizer

    tokenizer = train_bpe_tokenizer(
        [r.text for r in iu_xray_corpus()[:500]], ROOT / "checkpoints" / "bench_tokenizer", 2000
    )
    tokenizer.chat_template = None
    sizes = {
        "tiny": decoder_shape(128, 256, 2, 4, 2),
        "7b": decoder_shape(4096, 11008, 32, 32, 32),
        # SmolLM2-135M-Instruct, the GREEN small recipe's base (its config.json)
        "smollm2-135m": decoder_shape(576, 1536, 30, 9, 3, tie_word_embeddings=True),
    }[shape]
    vocab = {"7b": 32000, "smollm2-135m": 49152}.get(shape, len(tokenizer))
    # no EOS: every report uses the full budget
    config = LlamaConfig(
        vocab_size=vocab,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=None,
        **sizes,
    )
    with torch.device(inference_device()):
        model = AutoModelForCausalLM.from_config(
            config, dtype=default_dtype(), attn_implementation=attention_implementation()
        )
    return model.eval(), tokenizer


def ceiling_reports_per_second(model, prompt_tokens: float, new_tokens: int) -> tuple[float, float | None]:
    """(forward FLOPs of one report, reports/s the GPU's bf16 peak allows; None without a known peak)."""
    from radmetrics.training.common.throughput import attention_width, matmul_parameters, peak_tflops

    tokens = prompt_tokens + new_tokens
    layers, width = attention_width(model.config)
    flops = 2 * matmul_parameters(model) * tokens + 4 * layers * width * tokens**2
    peak = peak_tflops()
    return flops, (peak * 1e12 / flops if peak else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="an exported GREEN checkpoint (else --shape builds a random Llama)")
    parser.add_argument("--shape", default="tiny", choices=["tiny", "smollm2-135m", "7b"])
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument(
        "--engines", nargs="+", default=list(ENGINES), choices=ENGINES, help="GREEN engines, timed one after another"
    )
    parser.add_argument(
        "--results", help="results file (default benchmarks/results/green_scoring_throughput_NAME.json)"
    )
    args = parser.parse_args()
    model, tokenizer, prompt = load_green_model(args.model) if args.model else (*random_llama(args.shape), "green")
    reports = [r.text for r in iu_xray_corpus()[: args.pairs * 2]]
    refs, hyps = reports[: args.pairs], reports[args.pairs :]
    random.Random(0).shuffle(hyps)
    prompt_tokens = sum(
        len(
            tokenizer(
                render_prompt(tokenizer, green_messages(r, h, prompt=prompt)), add_special_tokens=False
            ).input_ids
        )
        for r, h in zip(refs, hyps)
    ) / len(refs)
    flops, ceiling = ceiling_reports_per_second(model, prompt_tokens, args.max_new_tokens)
    engines, answers = {}, {}
    for engine in args.engines:
        seconds, answers[engine], peak = timed_generation(model, tokenizer, refs, hyps, args, prompt, engine)
        engines[engine] = {
            "seconds": round(seconds, 2),
            "reports_per_s": round(args.pairs / seconds, 3),
            "share_of_ceiling": round(args.pairs / seconds / ceiling, 4) if ceiling else None,
            "peak_gpu_memory_gib": peak,
        }
    result = {
        "model": args.model or f"random {args.shape} Llama",
        "prompt": prompt,
        "pairs": args.pairs,
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "device": device_name(),
        "dtype": str(next(model.parameters()).dtype),
        "attention": model.config._attn_implementation,
        "mean_prompt_tokens": round(prompt_tokens, 1),
        "forward_flops_per_report": flops,
        "ceiling_reports_per_s": round(ceiling, 1) if ceiling else None,
        "engines": engines,
        **engine_comparison(engines, answers, tokenizer),
        "command": shlex.join(["python", *sys.argv]),
    }
    name = Path(args.model).name if args.model else args.shape
    out = (
        Path(args.results)
        if args.results
        else ROOT / "benchmarks" / "results" / f"green_scoring_throughput_{name}.json"
    )
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


def timed_generation(model, tokenizer, refs, hyps, args, prompt: str, engine: str):
    """(seconds, answers, peak GPU GiB) of one engine over every pair, after a short warm-up call of its own."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()  # what the previous engine cached is free memory for this one's paged cache
    few = refs[: args.batch_size], hyps[: args.batch_size]
    generate_green_responses(model, tokenizer, *few, args.batch_size, 8, progress=False, prompt=prompt, engine=engine)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    answers = generate_green_responses(
        model, tokenizer, refs, hyps, args.batch_size, args.max_new_tokens, prompt=prompt, engine=engine
    )
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None
    return seconds, answers, peak


def engine_comparison(engines: dict, answers: dict, tokenizer) -> dict:
    """Speed-up of the continuous engine over generate, the share of identical answers and the token agreement
    (answers re-tokenised; positions holding the same token over the longer answer's length), and the target."""
    if not {"generate", "continuous"} <= set(answers):
        return {}
    same = matched = total = 0
    for old, new in zip(answers["generate"], answers["continuous"]):
        same += old == new
        a, b = tokenizer(old, add_special_tokens=False).input_ids, tokenizer(new, add_special_tokens=False).input_ids
        matched += sum(x == y for x, y in zip(a, b))
        total += max(len(a), len(b))
    fast = engines["continuous"]["reports_per_s"]
    return {
        "speedup_continuous_over_generate": round(fast / engines["generate"]["reports_per_s"], 2),
        "identical_answers": round(same / len(answers["generate"]), 4),
        "token_agreement": round(matched / total, 4) if total else 1.0,
        "target_reports_per_s": TARGET_REPORTS_PER_S,
        "target_met": fast >= TARGET_REPORTS_PER_S,
    }


if __name__ == "__main__":
    main()
