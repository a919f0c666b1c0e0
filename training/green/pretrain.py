"""GREEN stage 1: domain-adaptive causal-LM pretraining on report text (GREEN section 3.1.2).

Packing: each step's documents are concatenated into one row without padding
(`DataCollatorWithFlattening`), with position ids restarting at every document. transformers turns restarting
position ids into a block-diagonal causal mask (SDPA/eager) or variable-length kernels (flash-attn 2), so no
token attends across a document boundary; the first token of each document carries no label. This needs the
model's KV cache off during training (`use_cache=False`, set by `build_causal_lm`), which a test checks:
packed logits equal the logits of each document alone.

    radmetrics train green/pretrain --config configs/green/pretrain/tiny.yaml
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from transformers import TrainingArguments

from ..config import RecipeParser
from ..encoder_recipe import build_once, start_run, train_and_finish
from .causal_lm import CausalLMArguments, build_causal_lm, build_causal_tokenizer

COMPONENT = "green"


@dataclass
class PretrainDataArguments:
    corpus_dir: str | None = field(default=None, metadata={
        "help": "output of `radmetrics data pretrain-corpus`; when unset, built from the bundled IU corpus into OUTPUT_DIR/corpus"})
    max_length: int = field(default=512, metadata={"help": "tokens per document (longer ones are cut)"})
    max_train_samples: int | None = field(default=None, metadata={"help": "truncate the training split"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})


ARGUMENT_TYPES = (CausalLMArguments, PretrainDataArguments, TrainingArguments)


def load_corpus(data_args: PretrainDataArguments, output_dir: str):
    from datasets import load_from_disk

    root = Path(data_args.corpus_dir) if data_args.corpus_dir else Path(output_dir) / "corpus"
    if data_args.corpus_dir and not (root / "hf").is_dir():
        raise FileNotFoundError(f"{root / 'hf'} not found: run `radmetrics data pretrain-corpus --out {root}` first")
    if not data_args.corpus_dir:
        def build():
            from radmetrics.data_builders.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus_io import assign_splits
            from radmetrics.data_builders.pretrain_corpus import write_pretrain_corpus

            reports = iu_xray_corpus()
            write_pretrain_corpus(reports, assign_splits(reports), root, {"corpus": "iu_xray", "path": "bundled", "split_by": "hash"})

        build_once(root, build)
    data = load_from_disk(str(root / "hf"))
    for split, limit in (("train", data_args.max_train_samples), ("validation", data_args.max_eval_samples), ("test", data_args.max_eval_samples)):
        if split not in data:
            raise ValueError(f"{root / 'hf'}: no {split!r} split (found {list(data)})")
        if limit:
            data[split] = data[split].select(range(min(limit, len(data[split]))))
    return data, {"corpus_dir": str(root), **{f"{s}_documents": len(d) for s, d in data.items()}}


def perplexity(model, dataset, collator, batch_size: int = 16) -> float:
    """Token-level perplexity of packed batches (the loss the model trains on)."""
    import torch

    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(dataset), batch_size):
            batch = collator([dataset[i] for i in range(start, min(start + batch_size, len(dataset)))])
            batch = {k: v.to(model.device) for k, v in batch.items()}
            n = int((batch["labels"] != -100).sum())
            total += float(model(**batch).loss) * n
            tokens += n
    return math.exp(total / tokens) if tokens else float("nan")


def main(argv: list[str] | None = None):
    from transformers import AutoModelForCausalLM, DataCollatorWithFlattening, Trainer

    model_args, data_args, training_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    data, provenance = load_corpus(data_args, training_args.output_dir)
    tokenizer = build_causal_tokenizer(model_args, data["train"]["text"], training_args.output_dir)
    run_dir = start_run(COMPONENT, "green/pretrain", model_args, data_args, training_args, provenance)

    def tokenize(batch):
        ids = tokenizer(batch["text"], add_special_tokens=False, truncation=True, max_length=data_args.max_length - 1)["input_ids"]
        return {"input_ids": [row + [tokenizer.eos_token_id] for row in ids]}

    with training_args.main_process_first(desc="tokenize"):
        tokenized = data.map(tokenize, batched=True, remove_columns=data["train"].column_names)
    collator = DataCollatorWithFlattening(return_position_ids=True)
    model = build_causal_lm(model_args, tokenizer)
    if training_args.activation_checkpointing:  # non-reentrant: works with LoRA's frozen inputs and ZeRO-3
        training_args.activation_checkpointing_kwargs = {"use_reentrant": False}
    trainer = Trainer(model=model, args=training_args, train_dataset=tokenized["train"], eval_dataset=tokenized["validation"],
                      data_collator=collator, processing_class=tokenizer)

    def evaluate(final: Path) -> dict:
        final_model = AutoModelForCausalLM.from_pretrained(final)
        final_model.config.use_cache = False
        return {f"{split}_perplexity": perplexity(final_model, tokenized[split], collator) for split in ("validation", "test")}

    train_and_finish(trainer, tokenizer, run_dir, evaluate)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
