"""CRIMSON evaluator fine-tuning: a causal LM learns to answer CRIMSON's prompt with its teacher's JSON evaluation, as
the authors trained their released model (rajpurkarlab/medgemma-4b-it-crimson; their finetuning/dataset.py and
finetune_medgemma.py, in MohammedSB/RadGame-MedGemma):

- Data: CRIMSON teacher records (`radmetrics data annotate --format crimson --endpoint ...`: the pair, its patient
  context when it has one, the teacher's answer); with `annotations_dir` unset, pairs of the bundled IU corpus (the
  GREEN pair heuristics, leak-free splits) are annotated here by `teacher_endpoint` (cached and resumable:
  OUTPUT_DIR/annotations), or, without one, by the programmatic teacher from their edit logs (no LLM: the tiny and
  small configs and the CPU rehearsals). Never RadPref.
- Each record: the user turn is CRIMSON's prompt without the three guideline sections and with the context (option
  `guidelines`), alone, with no system message (option `system_message`), rendered by the model's chat template
  with the generation prompt; the target is the teacher's evaluation as compact JSON (the reference parser's reading
  of the answer) followed by the EOS token, as the authors' dataset builds it. Loss on the target only. Records
  longer than `max_length` are dropped and counted (the authors cut them and force an EOS; a cut evaluation would
  teach the model to stop mid-JSON).
- Full fine-tuning or LoRA/QLoRA (PEFT), ZeRO-3 and SLURM as the GREEN recipe (training/common/sft.py); the export
  records `guidelines` and `system_message`, and `radmetrics score --metrics crimson --components EXPORT` prompts it
  the same way.
- Final evaluation: greedy answers on `final_eval_splits`, shared out over the ranks: parse rate and the CRIMSON
  score's MAE against the teacher beside the teacher's median as a constant (evaluation.py), with bootstrap
  intervals; each split's answers go to `<split>_generations.jsonl` in the run directory.

    radmetrics train crimson/sft --config configs/crimson/sft/small.yaml \
        --teacher_endpoint configs/llm/openai_gpt4o.yaml
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from trl import SFTConfig

from radmetrics.inference.metrics.crimson.metric import evaluate_answer
from radmetrics.inference.metrics.crimson.prompt import crimson_messages

from ..common.distributed import build_once, is_main_process
from ..common.lifecycle import start_run, train_and_finish
from ..common.record_checks import RecordFormatError, check_crimson_records, missing_splits_hint
from ..common.sft import PeftArguments, add_adapter_check, final_model, peft_parts
from ..config import RecipeParser, data_arguments
from ..green.causal_lm import TINY, CausalLMArguments, base_model_source, build_causal_lm, build_causal_tokenizer
from ..green.sft import build_sft_trainer
from .evaluation import agreement, student_answers, teacher_median, write_generations

COMPONENT = "crimson"
SPLITS = ("train", "validation", "test")


@dataclass
class CrimsonDataArguments:
    annotations_dir: str | None = field(
        default=None,
        metadata={
            "help": "directory of CRIMSON teacher records ({split}.jsonl: radmetrics data annotate --format crimson)"
        },
    )
    teacher_endpoint: str | None = field(
        default=None,
        metadata={
            "help": (
                "with annotations_dir unset: the LLM endpoint YAML that annotates pairs of the bundled corpus (cached"
                " in OUTPUT_DIR/annotations; rerun to resume); unset too: the programmatic teacher annotates them from"
                " their edit logs (data_builders/pairs/crimson_programmatic.py)"
            )
        },
    )
    heuristics: list[str] = field(
        default_factory=lambda: ["random", "remove_shuffle", "radgraph_permute", "recombine"],
        metadata={"help": "pair heuristics when building pairs from the bundled corpus"},
    )
    per_heuristic: int | None = field(default=None, metadata={"help": "pairs per heuristic when building them"})
    guidelines: bool = field(
        default=False,
        metadata={"help": "the prompt's three guideline sections (false: as the authors trained their model)"},
    )
    system_message: bool = field(
        default=False,
        metadata={
            "help": "CRIMSON's system message before the prompt (false: the user turn alone, as the authors trained)"
        },
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "a seeded draw of this many training records"}
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    final_eval_samples: int | None = field(
        default=None,
        metadata={
            "help": (
                "records of each final_eval_splits split the final evaluation generates for (default: all; 0: no"
                " final evaluation)"
            )
        },
    )
    final_eval_splits: list[str] = field(
        default_factory=lambda: ["test"],
        metadata={"help": "held-out splits the final evaluation generates for (validation, test)"},
    )
    max_new_tokens: int = field(default=1024, metadata={"help": "new-token budget of evaluation answers"})

    def __post_init__(self):
        unknown = sorted(set(self.final_eval_splits) - {"validation", "test"})
        if unknown:
            raise ValueError(f"final_eval_splits: {unknown} are not held-out splits (expected validation and/or test)")
        if self.teacher_endpoint and not Path(self.teacher_endpoint).is_file():
            raise ValueError(f"teacher_endpoint: {self.teacher_endpoint} is not a file (an LLM endpoint YAML)")


ARGUMENT_TYPES = (CausalLMArguments, CrimsonDataArguments, SFTConfig, PeftArguments)


def read_records(directory: Path) -> dict[str, list[dict]]:
    from radmetrics.inference.files.report_io import read_jsonl_records

    missing = [str(directory / f"{s}.jsonl") for s in SPLITS if not (directory / f"{s}.jsonl").is_file()]
    if missing:
        raise RecordFormatError(f"CRIMSON teacher records not found: {missing}{missing_splits_hint(directory)}")
    files = {split: str(directory / f"{split}.jsonl") for split in SPLITS}
    records = {split: [record for _, record in read_jsonl_records(files[split])] for split in SPLITS}
    check_crimson_records(records, files)  # before the tokenizer and the model
    return records


def limited(records: dict[str, list[dict]], data_args: CrimsonDataArguments, seed: int) -> dict[str, list[dict]]:
    out = {}
    for split, limit in (
        ("train", data_args.max_train_samples),
        ("validation", data_args.max_eval_samples),
        ("test", data_args.max_eval_samples),
    ):
        rows = list(records[split])
        if limit and split == "train":
            random.Random(seed).shuffle(rows)
        out[split] = rows[:limit] if limit else rows
    return out


def annotate_bundled_pairs(data_args: CrimsonDataArguments, root: Path, seed: int) -> None:
    """Pairs of the bundled IU corpus, drawn as the limits ask, annotated by the teacher endpoint into root/."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.data_builders.pairs.crimson_programmatic import programmatic_answer
    from radmetrics.data_builders.pairs.crimson_teacher import annotate_crimson
    from radmetrics.inference.llm.endpoint import Endpoint
    from radmetrics.inference.llm.engine import LLMEngine

    reports = iu_xray_corpus()
    pairs = build_pairs(reports, assign_splits(reports), data_args.heuristics, data_args.per_heuristic)
    by_split: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for pair in pairs:
        record = pair.to_dict()
        by_split[record["split"]].append(
            {
                "id": record["id"],
                "split": record["split"],
                "reference": record["reference"],
                "candidate": record["candidate"],
            }
        )
    chosen = [p for records in limited(by_split, data_args, seed).values() for p in records]
    root.mkdir(parents=True, exist_ok=True)
    if data_args.teacher_endpoint is None:
        answers = [(p, programmatic_answer(p)) for p in chosen]
        records = [{**p, "response": a, "crimson_score": evaluate_answer(a)[1]["crimson_score"]} for p, a in answers]
        records = [{**r, "teacher": "programmatic"} for r in records]
        failures = []
    else:
        engine = LLMEngine(Endpoint.from_yaml(data_args.teacher_endpoint), root / "llm_cache.sqlite", max_reprompts=2)
        records, failures = annotate_crimson(chosen, engine)
        engine.write_manifest(root / "llm_manifest.json")
    for split in SPLITS:
        with open(root / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in records if r["split"] == split)
    (root / "failures.jsonl").write_text("".join(json.dumps(f) + "\n" for f in failures), encoding="utf-8")


def load_records(data_args: CrimsonDataArguments, output_dir: str, seed: int) -> tuple[dict, dict]:
    if data_args.annotations_dir:
        root = Path(data_args.annotations_dir)
    else:
        root = Path(output_dir) / "annotations"
        build_once(root, lambda: annotate_bundled_pairs(data_args, root, seed))
    records = limited(read_records(root), data_args, seed)
    return records, {"annotations_dir": str(root), **{f"{s}_records": len(r) for s, r in records.items()}}


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `annotations_dir` read and checked as the run will (`radmetrics rehearse`, before anything
    launches); None when the run annotates bundled pairs."""
    data_args = data_arguments(CrimsonDataArguments, config, overrides)
    if not data_args.annotations_dir:
        return None
    read_records(Path(data_args.annotations_dir))
    return data_args.annotations_dir


def conversation(record: dict, data_args: CrimsonDataArguments) -> list[dict]:
    context = record.get("context") or None
    return crimson_messages(
        record["reference"], record["candidate"], context, data_args.guidelines, data_args.system_message
    )


def target_text(record: dict) -> str:
    """The teacher's evaluation as the reference parser reads it, as compact JSON (the authors' `raw_evaluation`)."""
    evaluation, _ = evaluate_answer(record["response"])
    return json.dumps(evaluation, separators=(",", ":"))


def tokenized(record: dict, tokenizer, data_args: CrimsonDataArguments) -> dict:
    """input_ids: the chat-templated prompt with the generation prompt, then the target's tokens and EOS;
    completion_mask marks the target (finetuning/dataset.py)."""
    prompt = tokenizer.apply_chat_template(
        conversation(record, data_args), add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    target = tokenizer(target_text(record), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return {"input_ids": list(prompt) + target, "completion_mask": [0] * len(prompt) + [1] * len(target)}


def tokenized_splits(records: dict, tokenizer, data_args, max_length: int) -> tuple[dict, dict]:
    """(train and validation as tokenized datasets, how many of each were dropped for exceeding max_length)."""
    from datasets import Dataset

    datasets, dropped = {}, {}
    for split in ("train", "validation"):
        rows = [tokenized(r, tokenizer, data_args) for r in records[split]]
        kept = [row for row in rows if len(row["input_ids"]) <= max_length]
        dropped[split] = len(rows) - len(kept)
        datasets[split] = Dataset.from_list(kept)
    return datasets, dropped


def main(argv: list[str] | None = None):
    model_args, data_args, training_args, peft_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    records, provenance = load_records(data_args, training_args.output_dir, training_args.seed)
    texts = [f"{r['reference']} {r['candidate']} {target_text(r)}" for r in records["train"]]
    if model_args.model_name_or_path == TINY:  # the tiny tokenizer learns the prompt's words too
        texts += [m["content"] for r in records["train"][:20] for m in conversation(r, data_args)]
    tokenizer = build_causal_tokenizer(model_args, texts, training_args.output_dir)
    with training_args.main_process_first(local=False, desc="tokenize"):
        datasets, dropped = tokenized_splits(records, tokenizer, data_args, training_args.max_length)
    provenance.update({f"{split}_dropped_over_max_length": n for split, n in dropped.items()})
    if source := base_model_source(model_args.model_name_or_path):
        provenance["base_model_source"] = source
    run_dir = start_run(COMPONENT, "crimson/sft", model_args, data_args, training_args, provenance, (peft_args,))

    quantization, peft_config = peft_parts(peft_args)
    model = build_causal_lm(model_args, tokenizer, quantization)
    if peft_config is not None and model_args.model_name_or_path == TINY and is_main_process():
        model.save_pretrained(run_dir / "base")
    trainer = build_sft_trainer(model, tokenizer, training_args, datasets, peft_config=peft_config)
    add_adapter_check(trainer, peft_config, peft_args.lora_r)
    constant = teacher_median(records["train"])

    def evaluate(final: Path) -> dict:
        results = {"teacher_median_score": constant}
        if data_args.final_eval_samples == 0:
            return results
        base = model_args.model_name_or_path if model_args.model_name_or_path != TINY else str(run_dir / "base")
        evaluated = final_model(final, base, peft_config, model_args.attn_implementation)
        for split in data_args.final_eval_splits:
            chosen = records[split][: data_args.final_eval_samples or len(records[split])]
            answers = student_answers(
                evaluated,
                tokenizer,
                chosen,
                lambda r: conversation(r, data_args),
                data_args.max_new_tokens,
                training_args.per_device_eval_batch_size,
            )
            if is_main_process():
                write_generations(run_dir / f"{split}_generations.jsonl", chosen, answers)
            results.update(agreement(answers, chosen, constant, prefix=f"{split}_"))
        return {**results, **{k: v for k, v in provenance.items() if k.endswith("dropped_over_max_length")}}

    train_and_finish(trainer, tokenizer, run_dir, evaluate, every_rank=True, sequence_length=training_args.max_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
