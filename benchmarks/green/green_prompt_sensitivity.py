"""Does a GREEN model read the reports it is asked to compare? The mean completion loss of held-out teacher
responses under their own prompt, next to the loss of the same responses under the next pair's prompt (the
reports rotated by one). A model that uses its input scores its own pair's response clearly better; equal
losses mean the model writes the response format without looking at the reports.

With `--plain` (for a stage-1 model), the text scored is each pair's candidate report written after its own
reference report (plain text, no prompt), next to the same candidate after the next pair's reference. Most
candidates reuse sentences of their reference, so a model that copies from its context (the skill GREEN's
quotes and comparisons need) predicts them clearly better after their own reference. Seconds on CPU, where
a full tiny SFT run takes a quarter of an hour.

    python benchmarks/green/green_prompt_sensitivity.py --model checkpoints/bench_green_tiny/sft/final \\
        --pairs checkpoints/bench_green_tiny/sft/pairs/test.jsonl
    python benchmarks/green/green_prompt_sensitivity.py --plain --model checkpoints/bench_green_tiny/pretrain/final \\
        --pairs checkpoints/bench_green_tiny/sft/pairs/test.jsonl

Writes benchmarks/results/green_prompt_sensitivity.json (with --plain: green_copy_probe.json).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def continuation_loss(model, tokenizer, prompt: str, full: str) -> float:
    """Mean token loss of `full` after its first len(prompt) tokens."""
    import torch

    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([tokenizer(full, add_special_tokens=False)["input_ids"]], device=model.device)
    labels = ids.clone()
    labels[0, : len(prompt_ids)] = -100
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


def completion_loss(model, tokenizer, reference: str, candidate: str, response: str) -> float:
    """Mean token loss of `response` after the GREEN prompt, formatted as in training (the chat template)."""
    from radmetrics.inference.metrics.green.generation import green_messages

    messages = green_messages(reference, candidate)
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": response}], tokenize=False)
    return continuation_loss(model, tokenizer, prompt, full)


def candidate_loss(model, tokenizer, reference: str, candidate: str) -> float:
    """Mean token loss of the candidate report written after `reference` (plain text, as in stage 1)."""
    return continuation_loss(model, tokenizer, f"{reference}\n\n", f"{reference}\n\n{candidate}")


def main() -> None:
    import numpy as np
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM

    from radmetrics.inference.loading.hub import load_tokenizer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a GREEN checkpoint directory (a run's final/ or an export)")
    parser.add_argument(
        "--pairs", required=True, help="GREEN annotation records (JSONL with reference, candidate, response)"
    )
    parser.add_argument("--n", type=int, default=100, help="pairs to use (the first N)")
    parser.add_argument(
        "--plain", action="store_true", help="score candidate reports after reference reports (stage-1 model)"
    )
    args = parser.parse_args()
    tokenizer = load_tokenizer(args.model, min_vocab=50)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    records = [json.loads(line) for line in Path(args.pairs).read_text(encoding="utf-8").splitlines()[: args.n]]
    if len(records) < 2:
        raise SystemExit(f"{args.pairs}: need at least 2 pairs, found {len(records)}")
    rotated = records[1:] + records[:1]
    own, other = [], []
    for record, donor in tqdm(list(zip(records, rotated)), desc="continuation loss"):
        if args.plain:
            own.append(candidate_loss(model, tokenizer, record["reference"], record["candidate"]))
            other.append(candidate_loss(model, tokenizer, donor["reference"], record["candidate"]))
        else:
            own.append(completion_loss(model, tokenizer, record["reference"], record["candidate"], record["response"]))
            other.append(completion_loss(model, tokenizer, donor["reference"], donor["candidate"], record["response"]))
    own, other = np.array(own), np.array(other)
    result = {
        "model": args.model,
        "pairs": args.pairs,
        "n": len(records),
        "scored": "candidate report" if args.plain else "GREEN response",
        "own_prompt_loss": round(float(own.mean()), 4),
        "rotated_prompt_loss": round(float(other.mean()), 4),
        "pairs_where_own_prompt_is_better": round(float((own < other).mean()), 3),
        "machine": platform.platform(),
    }
    name = "green_copy_probe.json" if args.plain else "green_prompt_sensitivity.json"
    (ROOT / "benchmarks" / "results" / name).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
