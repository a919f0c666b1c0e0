"""Does a GREEN model read the reports it is asked to compare? The mean completion loss of held-out teacher
responses under their own prompt, next to the loss of the same responses under the next pair's prompt (the
reports rotated by one). A model that uses its input scores its own pair's response clearly better; equal
losses mean the model writes the response format without looking at the reports.

    python benchmarks/green_prompt_sensitivity.py --model checkpoints/bench_green_tiny/sft/final \\
        --pairs checkpoints/bench_green_tiny/sft/pairs/test.jsonl

Writes benchmarks/results/green_prompt_sensitivity.json.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def completion_loss(model, tokenizer, reference: str, candidate: str, response: str) -> float:
    """Mean token loss of `response` after the GREEN prompt, formatted as in training (the chat template)."""
    import torch

    from radmetrics.inference.green_scoring import green_messages

    messages = green_messages(reference, candidate)
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": response}], tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([tokenizer(full, add_special_tokens=False)["input_ids"]], device=model.device)
    labels = ids.clone()
    labels[0, : len(prompt_ids)] = -100
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


def main() -> None:
    import numpy as np
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM

    from radmetrics.inference.models import load_tokenizer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a GREEN checkpoint directory (a run's final/ or an export)")
    parser.add_argument("--pairs", required=True, help="GREEN annotation records (JSONL with reference, candidate, response)")
    parser.add_argument("--n", type=int, default=100, help="pairs to use (the first N)")
    args = parser.parse_args()
    tokenizer = load_tokenizer(args.model, min_vocab=50)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    records = [json.loads(line) for line in Path(args.pairs).read_text(encoding="utf-8").splitlines()[: args.n]]
    if len(records) < 2:
        raise SystemExit(f"{args.pairs}: need at least 2 pairs, found {len(records)}")
    rotated = records[1:] + records[:1]
    own, other = [], []
    for record, donor in tqdm(list(zip(records, rotated)), desc="completion loss"):
        own.append(completion_loss(model, tokenizer, record["reference"], record["candidate"], record["response"]))
        other.append(completion_loss(model, tokenizer, donor["reference"], donor["candidate"], record["response"]))
    own, other = np.array(own), np.array(other)
    result = {"model": args.model, "pairs": args.pairs, "n": len(records), "own_prompt_loss": round(float(own.mean()), 4),
              "rotated_prompt_loss": round(float(other.mean()), 4),
              "pairs_where_own_prompt_is_better": round(float((own < other).mean()), 3),
              "machine": platform.platform()}
    (ROOT / "benchmarks" / "results" / "green_prompt_sensitivity.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
