"""GREEN stage 2: instruction fine-tuning on GREEN annotation records (GREEN section 3.1.2; TRL SFTTrainer).

- Data: GREEN annotation records (`radmetrics data pairs` for the programmatic teacher, `radmetrics data
  annotate` for an LLM teacher); when `pairs_dir` is unset, programmatic-teacher pairs of the bundled IU corpus
  are built into OUTPUT_DIR/pairs. Each record becomes a prompt-completion conversation: the appendix A.1 prompt
  (each report cut to its first 300 words, as the reference does), or with `prompt: short` the reports and one line,
  and the teacher's response.
- Loss on the response tokens only (TRL completion-only loss); every batch is checked to have unmasked labels in
  every row. Pairs longer than `max_length` (2048) after the 300-word cut are dropped and counted in the run
  manifest, never truncated (a cut response would teach the model to stop mid-analysis). Options `count_token_weight`
  (the response's digits weighted in the loss) and `train_draw: even_significant` (training pairs drawn evenly over the
  teacher's significant totals) are in count_focus.py; tried together on SmolLM2-135M, they did not help on validation
  (benchmarks/README.md).
- Full fine-tuning or LoRA/QLoRA (PEFT); AdamW, warm-up 5%, weight decay 0.1 (configs); non-reentrant gradient
  checkpointing; flash-attn 2 when installed, else SDPA. DeepSpeed ZeRO-3 configs (with and without CPU offload)
  save consolidated 16-bit weights; LoRA adapters are checked after every save and merged offline at the end.
- Evaluation (the paper's Table 2): parse rate and mean absolute error of the significant error counts and of
  matched findings against the teacher on held-out pairs, with a constant-prediction baseline (the teacher's
  training-set median); logged at every evaluation (single process). The final evaluation generates for
  `final_eval_splits` (the test split by default; add `validation` to choose settings without looking at test),
  with 95% bootstrap intervals and a paired bootstrap against the constant, into the eval results and model card;
  each split's generations go to `<split>_generations.jsonl` in the run directory.

    radmetrics train green/sft --config configs/green/sft/tiny.yaml --model_name_or_path \\
        checkpoints/green_pretrain_tiny/final
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from trl import SFTConfig, SFTTrainer

from radmetrics.inference.metrics.green.format import PROMPTS, prompt_reports
from radmetrics.inference.metrics.green.generation import MAX_REPORT_WORDS, green_messages

from ..common.distributed import build_once, is_main_process
from ..common.evaluation_hook import ComponentMetricEvaluation
from ..common.lifecycle import start_run, train_and_finish
from ..common.record_checks import RecordFormatError, check_green_records, missing_splits_hint, refuse_empty_files
from ..common.sft import PeftArguments, add_adapter_check, final_model, peft_parts
from ..config import RecipeParser, data_arguments
from .causal_lm import TINY, CausalLMArguments, base_model_source, build_causal_lm, build_causal_tokenizer
from .count_focus import TRAIN_DRAWS, count_weighted_loss, digit_token_mask, draw_training_pairs, significant_bins
from .evaluation import green_agreement, teacher_medians

COMPONENT = "green"


@dataclass
class GreenDataArguments:
    pairs_dir: str | None = field(
        default=None,
        metadata={
            "help": (
                "directory of GREEN annotation records ({split}.jsonl); unset: programmatic-teacher pairs of the"
                " bundled corpus"
            )
        },
    )
    heuristics: list[str] = field(
        default_factory=lambda: ["random", "remove_shuffle", "radgraph_permute", "recombine"],
        metadata={"help": "pair heuristics when building pairs from the bundled corpus"},
    )
    per_heuristic: int | None = field(default=None, metadata={"help": "pairs per heuristic when building them"})
    teacher: str = field(
        default="programmatic",
        metadata={
            "help": (
                "who annotates the pairs built from the bundled corpus: programmatic (their edit logs) or semantic"
                " (the semantic_green teacher, which agrees with radiologists: `radmetrics meta-eval radpref`)"
            )
        },
    )
    teacher_explanation: str = field(
        default="summary",
        metadata={
            "help": (
                "the teacher's [Explanation] when building pairs: summary (the counts only; the semantic teacher then"
                " quotes each statement's first words) or"
                " walkthrough (each sentence's verdict, then the counts; data_builders/pairs/programmatic_teacher.py)."
                " With pairs_dir,"
                " build them with `radmetrics data pairs --explanation`"
            )
        },
    )
    max_report_words: int = field(default=MAX_REPORT_WORDS, metadata={"help": "each report is cut to this many words"})
    prompt: str = field(
        default="green",
        metadata={
            "help": (
                "the user turn: green (appendix A.1, as released GREEN models read it), short (the two reports and one"
                " line, `format.short_prompt`: about 400 tokens fewer per pair), findings (short, each report's"
                " findings numbered as the findings-based semantic teacher judged them; scoring an export runs the"
                " extractor first) or numbered (short, with each report's"
                " statements numbered as the semantic teacher's walkthrough names them); the export records it and"
                " scoring uses it"
            )
        },
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "truncate the training split (see train_draw)"}
    )
    train_draw: str = field(
        default="shuffled",
        metadata={
            "help": (
                "how max_train_samples pairs are drawn: shuffled (a seeded shuffle) or even_significant (equal shares"
                " of the teacher's significant-error totals 0, 1, 2 and 3+; count_focus.py)"
            )
        },
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    generation_eval_samples: int = field(
        default=64, metadata={"help": "validation pairs generated at each evaluation (0: off)"}
    )
    final_eval_samples: int | None = field(
        default=None,
        metadata={
            "help": (
                "pairs of each final_eval_splits split generated by the final evaluation, shared out over the ranks"
                " (default: all; 0: no final evaluation)"
            )
        },
    )
    final_eval_splits: list[str] = field(
        default_factory=lambda: ["test"],
        metadata={
            "help": (
                "held-out splits the final evaluation generates for, with bootstrap intervals (validation, test): "
                "choose settings on `validation` alone, then report `test` once"
            )
        },
    )
    max_new_tokens: int = field(default=512, metadata={"help": "new-token budget of evaluation generations"})

    def __post_init__(self):
        if self.teacher not in ("programmatic", "semantic"):
            raise ValueError(f"teacher={self.teacher!r}: expected programmatic or semantic")
        if self.prompt not in PROMPTS:  # before the model loads, not inside the dataset map
            raise ValueError(f"prompt={self.prompt!r}: expected one of {', '.join(PROMPTS)}")
        if self.train_draw not in TRAIN_DRAWS:
            raise ValueError(f"train_draw={self.train_draw!r}: expected one of {', '.join(TRAIN_DRAWS)}")
        if self.train_draw != "shuffled" and not self.max_train_samples:
            raise ValueError(f"train_draw={self.train_draw} draws max_train_samples pairs: set max_train_samples")


@dataclass
class GreenLossArguments:
    count_token_weight: float = field(
        default=1.0,
        metadata={
            "help": (
                "weight of each digit token of the response (the counts) in the loss; 1 is TRL's loss (count_focus.py)"
            )
        },
    )

    def __post_init__(self):
        if self.count_token_weight <= 0:
            raise ValueError(f"count_token_weight={self.count_token_weight}: expected a positive weight")


ARGUMENT_TYPES = (CausalLMArguments, GreenDataArguments, SFTConfig, PeftArguments, GreenLossArguments)


def load_annotations(data_args: GreenDataArguments, output_dir: str):
    from datasets import load_dataset

    root = Path(data_args.pairs_dir) if data_args.pairs_dir else Path(output_dir) / "pairs"
    if not data_args.pairs_dir:

        def build():
            from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus.corpus_io import assign_splits
            from radmetrics.data_builders.pairs.builders import build_pairs
            from radmetrics.data_builders.pairs.dataset import write_pairs

            reports = iu_xray_corpus()
            splits = assign_splits(reports)
            pairs = build_pairs(reports, splits, data_args.heuristics, data_args.per_heuristic)
            write_pairs(
                pairs,
                root,
                {"corpus": "iu_xray", "path": "bundled", "split_by": "text"},
                data_args.teacher_explanation,
                data_args.teacher,
                "findings" if data_args.prompt == "findings" else "statements",
            )

        build_once(root, build)
        from radmetrics.data_builders.pairs.dataset import pairs_explanation, pairs_teacher

        if pairs_teacher(root) != data_args.teacher:
            raise ValueError(
                f"{root} holds pairs annotated by the {pairs_teacher(root)} teacher, not {data_args.teacher}: "
                f"use another output_dir, or remove {root}"
            )
        from radmetrics.data_builders.pairs.dataset import pairs_units

        units = "findings" if data_args.prompt == "findings" else "statements"
        if data_args.teacher == "semantic" and pairs_units(root) != units:
            raise ValueError(
                f"{root} holds the semantic teacher's annotations of {pairs_units(root)}, not of {units} (prompt "
                f"{data_args.prompt}): use another output_dir, or remove {root}"
            )
        found = pairs_explanation(root)
        if data_args.teacher == "programmatic" and found != data_args.teacher_explanation:
            raise ValueError(
                f"{root} holds pairs built with the {found} teacher explanation, not "
                f"{data_args.teacher_explanation}: use another output_dir, or remove {root}"
            )
    files = {split: str(root / f"{split}.jsonl") for split in ("train", "validation", "test")}
    missing = [f for f in files.values() if not Path(f).is_file()]
    if missing:
        raise RecordFormatError(f"GREEN annotation records not found: {missing}{missing_splits_hint(root)}")
    refuse_empty_files(files)  # an empty file has no columns for load_dataset
    data = load_dataset("json", data_files=files)
    check_green_records(data, files, data_args.prompt)  # before the tokenizer and the model
    for split, limit in (
        ("train", data_args.max_train_samples),
        ("validation", data_args.max_eval_samples),
        ("test", data_args.max_eval_samples),
    ):
        if limit:
            data[split] = draw_training_pairs(
                data[split], limit, data_args.train_draw if split == "train" else "shuffled"
            )
    return data, {"pairs_dir": str(root), **{f"{s}_pairs": len(d) for s, d in data.items()}}


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `pairs_dir` as the run will read and check it (its records, prompt and units), from the config and
    overrides alone: `radmetrics rehearse` calls it before anything launches. The folder checked, or None when the
    run builds bundled pairs."""
    data_args = data_arguments(GreenDataArguments, config, overrides)
    if not data_args.pairs_dir:
        return None
    load_annotations(data_args, output_dir="")
    return data_args.pairs_dir


def to_conversation(record: dict, max_words: int, prompt: str) -> dict:
    return {
        "prompt": green_messages(*prompt_reports(record, prompt), max_words, prompt),
        "completion": [{"role": "assistant", "content": record["response"]}],
    }


def conversation_length(tokenizer, example: dict) -> int:
    text = tokenizer.apply_chat_template(example["prompt"] + example["completion"], tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


class GreenSFTTrainer(ComponentMetricEvaluation, SFTTrainer):
    """SFTTrainer that refuses batches with a row whose labels are all masked, weights the response's digit tokens by
    `count_token_weight` when it is not 1 (count_focus.py), and adds GREEN agreement (parse rate, MAE against the
    teacher) to every evaluation when it runs in a single process."""

    def __init__(self, *args, count_token_weight: float = 1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.count_token_weight = count_token_weight
        self.digit_tokens = None
        if count_token_weight != 1.0:
            unsupported = [
                name
                for name, found in (
                    ("loss_type " + self.args.loss_type, self.args.loss_type != "nll"),
                    ("label smoothing", self.label_smoother is not None),
                    ("compute_loss_func", self.compute_loss_func is not None),
                    ("an MoE auxiliary loss", self.aux_loss_enabled),
                )
                if found
            ]
            if unsupported:
                raise ValueError(
                    "count_token_weight replaces TRL's plain loss and cannot be combined with"
                    f" {', '.join(unsupported)}"
                )
            self.digit_tokens = digit_token_mask(self.processing_class)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.get("labels")
        if labels is not None and not bool((labels != -100).any(dim=1).all()):
            raise RuntimeError(
                "a training row has no unmasked label: its response was cut off or the completion mask is wrong"
            )
        if self.digit_tokens is None:
            return super().compute_loss(
                model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch
            )
        outputs = model(**{k: v for k, v in inputs.items() if k != "labels"}, use_cache=False)
        loss = count_weighted_loss(
            outputs.logits, labels, self.digit_tokens, self.count_token_weight, num_items_in_batch
        )
        if (
            self.args.average_tokens_across_devices and num_items_in_batch is not None
        ):  # as TRL's loss: DDP averages the gradients
            loss = loss * (self.accelerator.num_processes // self.get_tp_size())
        return (loss, outputs) if return_outputs else loss


def green_conversations(data, tokenizer, data_args: GreenDataArguments, training_args) -> tuple:
    """(each split's records as prompt-completion conversations, how many per split were dropped for being longer
    than `max_length`: never cut, since a cut response would teach the model to stop mid-analysis)."""
    conversations = data.map(
        lambda r: to_conversation(r, data_args.max_report_words, data_args.prompt),
        remove_columns=data["train"].column_names,
        num_proc=training_args.dataset_num_proc,
    )
    dropped = {}
    for split in conversations:
        before = len(conversations[split])
        conversations[split] = conversations[split].filter(
            lambda e: conversation_length(tokenizer, e) <= training_args.max_length,
            num_proc=training_args.dataset_num_proc,
        )
        dropped[split] = before - len(conversations[split])
    return conversations, dropped


def build_sft_trainer(model, tokenizer, training_args, conversations, **trainer_options) -> GreenSFTTrainer:
    """The recipe's trainer: completion-only loss, non-reentrant activation checkpointing (it works with LoRA's frozen
    inputs and ZeRO-3), and TRL's collator and the Trainer's optimiser as `training_args` ask (`packing`,
    `padding_free`, `optim`, `use_liger_kernel`, `torch_compile`). benchmarks/gpu/sft_throughput.py times it."""
    if training_args.activation_checkpointing:
        training_args.activation_checkpointing_kwargs = {"use_reentrant": False}
    training_args.completion_only_loss = True
    return GreenSFTTrainer(
        model=model,
        args=training_args,
        train_dataset=conversations["train"],
        eval_dataset=conversations.get("validation"),
        processing_class=tokenizer,
        **trainer_options,
    )


def main(argv: list[str] | None = None):

    model_args, data_args, training_args, peft_args, loss_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    unknown = sorted(set(data_args.final_eval_splits) - {"validation", "test"})
    if unknown:
        raise ValueError(f"final_eval_splits: {unknown} are not held-out splits (expected validation and/or test)")
    data, provenance = load_annotations(data_args, training_args.output_dir)
    texts = [f"{r['reference']} {r['candidate']} {r['response']}" for r in data["train"]]
    tokenizer = build_causal_tokenizer(model_args, texts, training_args.output_dir)
    # global rank 0 first: the cache is on the filesystem every node shares
    with training_args.main_process_first(local=False, desc="conversations"):
        conversations, dropped = green_conversations(data, tokenizer, data_args, training_args)
    provenance.update({f"{split}_dropped_over_max_length": n for split, n in dropped.items()})
    if data_args.train_draw != "shuffled":  # what the draw left after the drop over max_length
        provenance["train_significant_bins"] = significant_bins(
            c[0]["content"] for c in conversations["train"]["completion"]
        )
    if source := base_model_source(model_args.model_name_or_path):  # None for the tiny model
        provenance["base_model_source"] = source
    run_dir = start_run(
        COMPONENT, "green/sft", model_args, data_args, training_args, provenance, (peft_args, loss_args)
    )

    quantization, peft_config = peft_parts(peft_args)
    model = build_causal_lm(model_args, tokenizer, quantization)
    if peft_config is not None and model_args.model_name_or_path == TINY and is_main_process():
        model.save_pretrained(run_dir / "base")  # the random tiny base the adapter is merged onto at the end

    constant = teacher_medians(data["train"])
    validation = data["validation"].select(range(min(data_args.generation_eval_samples, len(data["validation"]))))

    def generation_eval(current_model) -> dict:
        agreement = green_agreement(
            current_model, tokenizer, validation, constant, data_args.max_new_tokens, prompt=data_args.prompt
        )
        return {f"green_{key}": value for key, value in agreement.items()}

    trainer = build_sft_trainer(
        model,
        tokenizer,
        training_args,
        conversations,
        peft_config=peft_config,
        component_eval=generation_eval if data_args.generation_eval_samples else None,
        count_token_weight=loss_args.count_token_weight,
    )
    add_adapter_check(trainer, peft_config, peft_args.lora_r)

    def evaluate(final: Path) -> dict:
        """On every rank: the merged final model on this rank's device generates its share of each split's pairs."""
        dropped = {k: v for k, v in provenance.items() if k.endswith("dropped_over_max_length")}
        if data_args.final_eval_samples == 0:
            return dropped
        base = model_args.model_name_or_path if model_args.model_name_or_path != TINY else str(run_dir / "base")
        evaluated = final_model(final, base, peft_config, model_args.attn_implementation)
        results = {}
        for split in data_args.final_eval_splits:
            records = data[split].select(
                range(min(data_args.final_eval_samples or len(data[split]), len(data[split])))
            )
            results.update(
                green_agreement(
                    evaluated,
                    tokenizer,
                    records,
                    constant,
                    data_args.max_new_tokens,
                    prefix=f"{split}_",
                    generations_path=run_dir / f"{split}_generations.jsonl",
                    across_ranks=True,
                    intervals=True,
                    prompt=data_args.prompt,
                )
            )
        return {**results, **dropped}

    train_and_finish(trainer, tokenizer, run_dir, evaluate, every_rank=True, sequence_length=training_args.max_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
