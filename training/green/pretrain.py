"""GREEN stage 1: domain-adaptive causal-LM pretraining on report text (GREEN section 3.1.2).

Packing: each step's documents are concatenated into one row without padding
(`DataCollatorWithFlattening`), with position ids restarting at every document. With `pack_tokens`, documents are
first grouped into rows of at most that many tokens and `per_device_train_batch_size` counts rows, so a step holds a
fixed token budget (a GPU configuration packs thousands of tokens per device instead of a handful of short reports).
transformers turns restarting
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

from radmetrics.inference.loading.hub import default_dtype, inference_device

from ..common.distributed import build_once
from ..common.encoder_data_checks import other_data
from ..common.lifecycle import start_run, train_and_finish
from ..common.record_checks import RecordFormatError, check_columns
from ..config import RecipeParser, data_arguments
from .causal_lm import (
    CausalLMArguments,
    attention_implementation,
    base_model_source,
    build_causal_lm,
    build_causal_tokenizer,
)

COMPONENT = "green"


@dataclass
class PretrainDataArguments:
    corpus_dir: str | None = field(
        default=None,
        metadata={
            "help": (
                "output of `radmetrics data pretrain-corpus`; when unset, built from the bundled IU corpus into"
                " OUTPUT_DIR/corpus"
            )
        },
    )
    max_length: int = field(default=512, metadata={"help": "tokens per document (longer ones are cut)"})
    max_train_samples: int | None = field(default=None, metadata={"help": "truncate the training split"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    pack_tokens: int | None = field(
        default=None,
        metadata={
            "help": (
                "tokens per packed training row (documents grouped greedily in a seeded order); unset: one document"
                " per item"
            )
        },
    )
    preprocessing_num_workers: int | None = field(
        default=None, metadata={"help": "processes for tokenisation (datasets.map)"}
    )
    final_eval_samples: int | None = field(
        default=None,
        metadata={
            "help": (
                "documents per split in the final perplexity, shared out over the ranks (default: all; 0: no final"
                " evaluation)"
            )
        },
    )


ARGUMENT_TYPES = (CausalLMArguments, PretrainDataArguments, TrainingArguments)


def load_corpus(data_args: PretrainDataArguments, output_dir: str):
    from datasets import load_from_disk

    root = Path(data_args.corpus_dir) if data_args.corpus_dir else Path(output_dir) / "corpus"
    if data_args.corpus_dir and not (root / "hf").is_dir():
        other = other_data(root) if root.is_dir() else None
        raise RecordFormatError(
            f"--corpus_dir {root} "
            + (f"holds {other}, not a pretraining corpus" if other else "has no hf/ dataset")
            + f": build the corpus with `radmetrics data pretrain-corpus --out {root}`"
        )
    if not data_args.corpus_dir:

        def build():
            from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus.corpus_io import assign_splits
            from radmetrics.data_builders.corpus.pretraining import write_pretrain_corpus

            reports = iu_xray_corpus()
            write_pretrain_corpus(
                reports, assign_splits(reports), root, {"corpus": "iu_xray", "path": "bundled", "split_by": "text"}
            )

        build_once(root, build)
    data = load_from_disk(str(root / "hf"))
    missing = [split for split in ("train", "validation", "test") if split not in data]
    if missing:
        raise RecordFormatError(f"{root / 'hf'}: no {missing[0]!r} split (found {list(data)})")
    check_columns(data, ("text",), str(root / "hf"), f"build it with `radmetrics data pretrain-corpus --out {root}`")
    for split, limit in (
        ("train", data_args.max_train_samples),
        ("validation", data_args.max_eval_samples),
        ("test", data_args.max_eval_samples),
    ):
        if limit:
            data[split] = data[split].select(range(min(limit, len(data[split]))))
    return data, {"corpus_dir": str(root), **{f"{s}_documents": len(d) for s, d in data.items()}}


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `corpus_dir` read and checked as the run will (its splits and `text` column); `radmetrics rehearse`
    calls it before anything launches. The folder checked, or None when the run builds the bundled corpus."""
    data_args = data_arguments(PretrainDataArguments, config, overrides)
    if not data_args.corpus_dir:
        return None
    load_corpus(data_args, output_dir="")
    return data_args.corpus_dir


def pack_documents(dataset, pack_tokens: int, seed: int):
    """Documents (`input_ids`) grouped into rows of at most `pack_tokens` tokens, in a seeded shuffled order; a row is
    {"documents": [ids, ...]}. A document longer than the budget is a row of its own."""
    import random

    from datasets import Dataset

    order = list(range(len(dataset)))
    random.Random(seed).shuffle(order)
    rows, row, used = [], [], 0
    for i in order:
        ids = dataset[i]["input_ids"]
        if row and used + len(ids) > pack_tokens:
            rows.append(row)
            row, used = [], 0
        row.append(ids)
        used += len(ids)
    if row:
        rows.append(row)
    return Dataset.from_dict({"documents": rows})


class FlattenDocuments:
    """Every document of a batch (packed rows or single documents) in one row with restarting position ids."""

    def __init__(self):
        from transformers import DataCollatorWithFlattening

        self.flatten = DataCollatorWithFlattening(return_position_ids=True)

    def __call__(self, features: list[dict]) -> dict:
        documents = [
            {"input_ids": ids} for f in features for ids in (f["documents"] if "documents" in f else [f["input_ids"]])
        ]
        return self.flatten(documents)


def perplexity(model, dataset, collator, batch_size: int = 16, across_ranks: bool = False) -> float:
    """Token-level perplexity of packed batches (the loss the model trains on). With `across_ranks`, each rank of the
    process group takes every world-size-th document and the sums are combined."""
    import torch

    from ..common.distributed import gather_to_all, rank_and_world

    rank, world = rank_and_world() if across_ranks else (0, 1)
    mine = list(range(rank, len(dataset), world))
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(mine), batch_size):
            batch = collator([dataset[i] for i in mine[start : start + batch_size]])
            batch = {k: v.to(model.device) for k, v in batch.items()}
            n = int((batch["labels"] != -100).sum())
            total += float(model(**batch).loss) * n
            tokens += n
    if across_ranks:
        sums = gather_to_all([(total, tokens)])
        total, tokens = sum(s for s, _ in sums), sum(n for _, n in sums)
    return math.exp(total / tokens) if tokens else float("nan")


def main(argv: list[str] | None = None):
    from transformers import AutoModelForCausalLM, Trainer

    model_args, data_args, training_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    data, provenance = load_corpus(data_args, training_args.output_dir)
    tokenizer = build_causal_tokenizer(model_args, data["train"]["text"], training_args.output_dir)
    if source := base_model_source(model_args.model_name_or_path):  # None for the tiny model
        provenance["base_model_source"] = source
    run_dir = start_run(COMPONENT, "green/pretrain", model_args, data_args, training_args, provenance)

    def tokenize(batch):
        ids = tokenizer(batch["text"], add_special_tokens=False, truncation=True, max_length=data_args.max_length - 1)[
            "input_ids"
        ]
        return {"input_ids": [row + [tokenizer.eos_token_id] for row in ids]}

    with training_args.main_process_first(
        local=False, desc="tokenize"
    ):  # global rank 0 first: the cache is on the filesystem every node shares
        tokenized = data.map(
            tokenize,
            batched=True,
            remove_columns=data["train"].column_names,
            num_proc=data_args.preprocessing_num_workers,
        )
    collator = FlattenDocuments()
    train = tokenized["train"]
    if data_args.pack_tokens:
        train = pack_documents(train, data_args.pack_tokens, training_args.seed)
        training_args.remove_unused_columns = False  # the rows' `documents` reach the collator
    model = build_causal_lm(model_args, tokenizer)
    if training_args.activation_checkpointing:  # non-reentrant: works with LoRA's frozen inputs and ZeRO-3
        training_args.activation_checkpointing_kwargs = {"use_reentrant": False}
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=tokenized["validation"],
        data_collator=collator,
        processing_class=tokenizer,
    )

    def evaluate(final: Path) -> dict:
        """On every rank: this rank's share of each split, on its own device."""
        if data_args.final_eval_samples == 0:
            return {}
        final_model = AutoModelForCausalLM.from_pretrained(
            final, dtype=default_dtype(), attn_implementation=attention_implementation(model_args.attn_implementation)
        )
        final_model = final_model.to(inference_device())
        final_model.config.use_cache = False
        limit = data_args.final_eval_samples
        return {
            f"{split}_perplexity": perplexity(
                final_model,
                tokenized[split].select(range(min(limit or len(tokenized[split]), len(tokenized[split])))),
                collator,
                across_ranks=True,
            )
            for split in ("validation", "test")
        }

    train_and_finish(trainer, tokenizer, run_dir, evaluate, every_rank=True, sequence_length=data_args.max_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
