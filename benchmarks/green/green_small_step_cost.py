"""Cost of one GREEN small training step on CPU, per setting: tokens/s of forward + backward + AdamW on
SmolLM2-135M-Instruct for 4 GREEN SFT conversations of the bundled pairs (cut to --tokens), fp32 or bf16 autocast, full
fine-tuning or LoRA.
What configs/green/sft/small.yaml's cost settings were chosen on.

    python benchmarks/green/green_small_step_cost.py --setting fp32-full      # also bf16-full, fp32-lora, bf16-lora
    python benchmarks/green/green_small_step_cost.py --setting fp32-full --pairs checkpoints/bench_green_small/pairs

Prints each step's seconds and tokens/s (the first includes warm-up). Pairs: --pairs DIR (`radmetrics data pairs`
output), else built from the bundled corpus with two heuristics.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def conversations(pairs_dir: str | None, count: int, tokenizer) -> list[str]:
    from radmetrics.inference.metrics.green.generation import green_messages

    if pairs_dir is None:
        from radmetrics.inference.cli import main as radmetrics

        pairs_dir = tempfile.mkdtemp()
        radmetrics(
            ["data", "pairs", "--out", pairs_dir, "--heuristics", "remove_shuffle", "random", "--per-heuristic", "20"]
        )
    records = [
        json.loads(line) for line in (Path(pairs_dir) / "train.jsonl").read_text(encoding="utf-8").splitlines()
    ][:count]
    return [
        tokenizer.apply_chat_template(
            green_messages(r["reference"], r["candidate"]) + [{"role": "assistant", "content": r["response"]}],
            tokenize=False,
        )
        for r in records
    ]


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from radmetrics.inference.loading.hub import resolve_model_path

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setting", default="fp32-full", choices=["fp32-full", "bf16-full", "fp32-lora", "bf16-lora"])
    parser.add_argument("--pairs")
    parser.add_argument("--tokens", type=int, default=900)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    path = resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    if args.setting.endswith("lora"):
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
        )
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    batch = tokenizer(
        conversations(args.pairs, 4, tokenizer),
        return_tensors="pt",
        padding=True,
        truncation=True,
        max_length=args.tokens,
    )
    for step in range(args.steps):
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.setting.startswith("bf16")):
            loss = model(**batch, labels=batch["input_ids"]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        seconds = time.perf_counter() - start
        print(
            json.dumps(
                {
                    "setting": args.setting,
                    "step": step,
                    "seconds": round(seconds, 1),
                    "tokens": batch["input_ids"].numel(),
                    "tokens_per_second": round(batch["input_ids"].numel() / seconds),
                    "threads": torch.get_num_threads(),
                }
            )
        )


if __name__ == "__main__":
    main()
