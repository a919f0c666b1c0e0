"""GREEN stage 2: instruction fine-tuning on GREEN annotation records (GREEN section 3.1.2; TRL SFTTrainer).

- Data: GREEN annotation records (`radmetrics data pairs` for the programmatic teacher, `radmetrics data
  annotate` for an LLM teacher); when `pairs_dir` is unset, programmatic-teacher pairs of the bundled IU corpus
  are built into OUTPUT_DIR/pairs. Each record becomes a prompt-completion conversation: the appendix A.1 prompt
  (each report cut to its first 300 words, as the reference does) and the teacher's response.
- Loss on the response tokens only (TRL completion-only loss); every batch is checked to have unmasked labels in
  every row. Pairs longer than `max_length` (2048) after the 300-word cut are dropped and counted in the run
  manifest, never truncated (a cut response would teach the model to stop mid-analysis).
- Full fine-tuning or LoRA/QLoRA (PEFT); AdamW, warm-up 5%, weight decay 0.1 (configs); non-reentrant gradient
  checkpointing; flash-attn 2 when installed, else SDPA. DeepSpeed ZeRO-3 configs (with and without CPU offload)
  save consolidated 16-bit weights; LoRA adapters are checked after every save and merged offline at the end.
- Evaluation (the paper's Table 2): parse rate and mean absolute error of the significant error counts and of
  matched findings against the teacher on held-out pairs, with a constant-prediction baseline (the teacher's
  training-set median); logged at every evaluation (single process) and written to the eval results and model
  card; the test split's generations go to `test_generations.jsonl` in the run directory.

    radmetrics train green/sft --config configs/green/sft/tiny.yaml --model_name_or_path checkpoints/green_pretrain_tiny/final
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from trl import SFTConfig, SFTTrainer

from radmetrics.inference.metrics.green.generation import MAX_REPORT_WORDS, green_messages

from ..config import RecipeParser
from ..encoder_recipe import build_once, is_main_process, start_run, train_and_finish
from .causal_lm import TINY, CausalLMArguments, build_causal_lm, build_causal_tokenizer
from .evaluation import green_agreement, teacher_medians

COMPONENT = "green"


@dataclass
class GreenDataArguments:
    pairs_dir: str | None = field(default=None, metadata={
        "help": "directory of GREEN annotation records ({split}.jsonl); unset: programmatic-teacher pairs of the bundled corpus"})
    heuristics: list[str] = field(default_factory=lambda: ["random", "remove_shuffle", "radgraph_permute", "recombine"], metadata={
        "help": "pair heuristics when building pairs from the bundled corpus"})
    per_heuristic: int | None = field(default=None, metadata={"help": "pairs per heuristic when building them"})
    max_report_words: int = field(default=MAX_REPORT_WORDS, metadata={"help": "each report is cut to this many words"})
    max_train_samples: int | None = field(default=None, metadata={"help": "truncate the training split"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    generation_eval_samples: int = field(default=64, metadata={"help": "validation pairs generated at each evaluation (0: off)"})
    max_new_tokens: int = field(default=512, metadata={"help": "new-token budget of evaluation generations"})


@dataclass
class PeftArguments:
    use_peft: bool = field(default=False, metadata={"help": "train a LoRA adapter instead of all weights"})
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: list[str] = field(default_factory=lambda: ["all-linear"])
    load_in_4bit: bool = field(default=False, metadata={"help": "QLoRA: a 4-bit base (bitsandbytes, CUDA only)"})


ARGUMENT_TYPES = (CausalLMArguments, GreenDataArguments, SFTConfig, PeftArguments)


def load_annotations(data_args: GreenDataArguments, output_dir: str):
    from datasets import load_dataset

    root = Path(data_args.pairs_dir) if data_args.pairs_dir else Path(output_dir) / "pairs"
    if not data_args.pairs_dir:
        def build():
            from radmetrics.data_builders.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus_io import assign_splits
            from radmetrics.data_builders.pair_dataset import write_pairs
            from radmetrics.data_builders.pairs import build_pairs

            reports = iu_xray_corpus()
            splits = assign_splits(reports)
            pairs = build_pairs(reports, splits, data_args.heuristics, data_args.per_heuristic)
            write_pairs(pairs, root, {"corpus": "iu_xray", "path": "bundled", "split_by": "hash", "teacher": "programmatic"})

        build_once(root, build)
    files = {split: str(root / f"{split}.jsonl") for split in ("train", "validation", "test")}
    missing = [f for f in files.values() if not Path(f).is_file()]
    if missing:
        raise FileNotFoundError(f"GREEN annotation records not found: {missing}")
    data = load_dataset("json", data_files=files)
    for split, limit in (("train", data_args.max_train_samples), ("validation", data_args.max_eval_samples), ("test", data_args.max_eval_samples)):
        if "response" not in data[split].column_names:
            raise ValueError(f"{files[split]}: records have no `response` (annotate the pairs first)")
        if limit:
            data[split] = data[split].shuffle(seed=0).select(range(min(limit, len(data[split]))))
    return data, {"pairs_dir": str(root), **{f"{s}_pairs": len(d) for s, d in data.items()}}


def to_conversation(record: dict, max_words: int) -> dict:
    return {"prompt": green_messages(record["reference"], record["candidate"], max_words),
            "completion": [{"role": "assistant", "content": record["response"]}]}


def conversation_length(tokenizer, example: dict) -> int:
    text = tokenizer.apply_chat_template(example["prompt"] + example["completion"], tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _gather_over_process_group(tensor, *args, **kwargs):
    import torch
    import torch.distributed as dist

    tensor = tensor.reshape(1) if tensor.dim() == 0 else tensor
    gathered = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor.contiguous())
    return torch.cat(gathered)


class GreenSFTTrainer(SFTTrainer):
    """SFTTrainer that refuses batches with a row whose labels are all masked, and adds GREEN agreement
    (parse rate, MAE against the teacher) to every evaluation when it runs in a single process."""

    def __init__(self, *args, generation_eval=None, **kwargs):
        import torch.distributed as dist

        super().__init__(*args, **kwargs)
        self.generation_eval = generation_eval

        if dist.is_initialized() and dist.get_world_size() != self.accelerator.num_processes:
            # DeepSpeed on CPU: accelerate sees one process while the process group has several, so TRL's metric
            # gathers (sized by accelerate) fail in all_gather. Gather over the real group instead.
            self.accelerator.gather_for_metrics = _gather_over_process_group

    def compute_loss(self, model, inputs, *args, **kwargs):
        labels = inputs.get("labels")
        if labels is not None and not bool((labels != -100).any(dim=1).all()):
            raise RuntimeError("a training row has no unmasked label: its response was cut off or the completion mask is wrong")
        return super().compute_loss(model, inputs, *args, **kwargs)

    def evaluate(self, *args, **kwargs):
        metrics = super().evaluate(*args, **kwargs)
        if self.generation_eval is not None and self.accelerator.num_processes == 1 and not self.is_deepspeed_enabled:
            extra = {f"eval_green_{k}": v for k, v in self.generation_eval(self.model).items() if isinstance(v, (int, float))}
            self.log(extra)
            metrics.update(extra)
        return metrics


def main(argv: list[str] | None = None):
    from transformers import AutoModelForCausalLM

    model_args, data_args, training_args, peft_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    data, provenance = load_annotations(data_args, training_args.output_dir)
    texts = [f"{r['reference']} {r['candidate']} {r['response']}" for r in data["train"]]
    tokenizer = build_causal_tokenizer(model_args, texts, training_args.output_dir)
    conversations = data.map(lambda r: to_conversation(r, data_args.max_report_words), remove_columns=data["train"].column_names)
    for split in conversations:
        before = len(conversations[split])
        conversations[split] = conversations[split].filter(lambda e: conversation_length(tokenizer, e) <= training_args.max_length)
        provenance[f"{split}_dropped_over_max_length"] = before - len(conversations[split])
    run_dir = start_run(COMPONENT, "green/sft", model_args, data_args, training_args, provenance, (peft_args,))

    quantization, peft_config = None, None
    if peft_args.load_in_4bit:
        import torch
        from transformers import BitsAndBytesConfig

        if not torch.cuda.is_available():
            raise RuntimeError("load_in_4bit (QLoRA) needs a CUDA GPU and bitsandbytes")
        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
    if peft_args.use_peft or peft_args.load_in_4bit:
        from peft import LoraConfig

        peft_config = LoraConfig(r=peft_args.lora_r, lora_alpha=peft_args.lora_alpha, lora_dropout=peft_args.lora_dropout,
                                 target_modules=peft_args.lora_target_modules[0] if peft_args.lora_target_modules == ["all-linear"]
                                 else peft_args.lora_target_modules, task_type="CAUSAL_LM")
    model = build_causal_lm(model_args, tokenizer, quantization)
    if peft_config is not None and model_args.model_name_or_path == TINY and is_main_process():
        model.save_pretrained(run_dir / "base")  # the random tiny base the adapter is merged onto at the end
    if training_args.activation_checkpointing:  # non-reentrant: works with LoRA's frozen inputs and ZeRO-3
        training_args.activation_checkpointing_kwargs = {"use_reentrant": False}
    training_args.completion_only_loss = True

    constant = teacher_medians(data["train"])
    validation = data["validation"].select(range(min(data_args.generation_eval_samples, len(data["validation"]))))

    def generation_eval(current_model) -> dict:
        return green_agreement(current_model, tokenizer, validation, constant, data_args.max_new_tokens)

    trainer = GreenSFTTrainer(model=model, args=training_args, train_dataset=conversations["train"],
                              eval_dataset=conversations["validation"], processing_class=tokenizer, peft_config=peft_config,
                              generation_eval=generation_eval if data_args.generation_eval_samples else None)
    if peft_config is not None:
        from peft.utils import get_peft_model_state_dict

        from .adapters import AdapterCheck

        trainer.add_callback(AdapterCheck(set(get_peft_model_state_dict(trainer.model)), peft_args.lora_r))

    def evaluate(final: Path) -> dict:
        if peft_config is not None:
            from .adapters import merge_into_final

            merge_into_final(final, model_args.model_name_or_path if model_args.model_name_or_path != TINY else str(run_dir / "base"))
        final_model = AutoModelForCausalLM.from_pretrained(final)
        return {**green_agreement(final_model, tokenizer, data["test"], constant, data_args.max_new_tokens, prefix="test_",
                                  generations_path=run_dir / "test_generations.jsonl"),
                **{k: v for k, v in provenance.items() if k.endswith("dropped_over_max_length")}}

    train_and_finish(trainer, tokenizer, run_dir, evaluate)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
