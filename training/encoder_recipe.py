"""What every encoder recipe shares: arguments, silver data, tokenizer/model construction, resume and
the run directory contract (manifest, step checkpoints with `.complete`, `final/`, eval results).

Recipes stay thin (alignment-handbook style): parse `ModelArguments`, `DataArguments`, HF
`TrainingArguments` (+ their own), build datasets and a model, then `train_and_finish`.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from transformers import TrainerCallback

from .run_dir import (
    is_complete,
    last_complete_checkpoint,
    mark_complete,
    read_eval_results,
    write_eval_results,
    write_run_manifest,
)

TINY_MODELS = ("tiny-bert", "tiny-deberta")


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="tiny-bert", metadata={
        "help": "a local path or Hub id (local first), 'default' for the bundled MiniLM, or tiny-bert / tiny-deberta "
                "for a random tiny encoder with a WordPiece tokenizer trained on the training text"})
    tiny_vocab_size: int = field(default=2000, metadata={"help": "vocabulary of the tiny tokenizer"})
    tiny_hidden_size: int = field(default=64, metadata={"help": "hidden size of the tiny encoder"})


@dataclass
class DataArguments:
    silver_dir: str | None = field(default=None, metadata={
        "help": "output of `radmetrics data silver`; when unset, silver labels of the bundled IU corpus are built "
                "into OUTPUT_DIR/silver"})
    max_train_samples: int | None = field(default=None, metadata={"help": "truncate the training split"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    max_seq_length: int = field(default=128, metadata={"help": "tokens per example after tokenisation"})


class CompletionMarker(TrainerCallback):
    """Mark checkpoint-<step> complete once the Trainer has written all of it (on_save runs after the save)."""

    def on_save(self, args, state, control, **kwargs):
        if is_main_process():
            checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if checkpoint.is_dir():
                mark_complete(checkpoint)


def is_main_process() -> bool:
    """Global rank 0, read from the launcher's environment (torchrun/accelerate set RANK). HF Trainer's own
    notion is not used: with DeepSpeed on CPU it reports a world size of 1 on every rank."""
    return int(os.environ.get("RANK", "0")) == 0


def build_once(marker: Path, build, timeout_s: float = 3600) -> None:
    """Local rank 0 runs `build` unless `marker` exists, then writes the marker; other ranks wait for it."""
    if int(os.environ.get("LOCAL_RANK", "0")) == 0:
        if not is_complete(marker):
            build()
            marker.mkdir(parents=True, exist_ok=True)
            mark_complete(marker)
        return
    waited = 0.0
    while not is_complete(marker):
        if waited > timeout_s:
            raise TimeoutError(f"rank {os.environ.get('RANK')}: gave up waiting for {marker} from local rank 0")
        time.sleep(0.5)
        waited += 0.5


def load_silver(data_args: DataArguments, labeler: str, training_args):
    """The labeler's silver DatasetDict, building it from the bundled corpus on the main process if needed."""
    from datasets import load_from_disk

    root = Path(data_args.silver_dir) if data_args.silver_dir else Path(training_args.output_dir) / "silver"
    hf_dir = root / labeler / "hf"
    if data_args.silver_dir and not hf_dir.is_dir():
        raise FileNotFoundError(f"{hf_dir} not found: run `radmetrics data silver --out {root}` first")
    if not data_args.silver_dir:
        def build():
            from radmetrics.data_builders.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus_io import assign_splits
            from radmetrics.data_builders.silver_dataset import write_silver

            reports = [r for r in iu_xray_corpus() if r.text]
            write_silver(reports, assign_splits(reports), root, labelers=[labeler],
                         provenance={"corpus": "iu_xray", "path": "bundled", "split_by": "hash"})

        build_once(root / labeler, build)
    data = load_from_disk(str(hf_dir))
    for split in ("train", "validation", "test"):
        if split not in data:
            raise ValueError(f"{hf_dir}: the silver dataset has no {split!r} split (found {list(data)})")
    if data_args.max_train_samples:
        data["train"] = data["train"].select(range(min(data_args.max_train_samples, len(data["train"]))))
    if data_args.max_eval_samples:
        for split in ("validation", "test"):
            data[split] = data[split].select(range(min(data_args.max_eval_samples, len(data[split]))))
    return data, {"silver_dir": str(root), "labeler": labeler, **{f"{s}_examples": len(d) for s, d in data.items()}}


def build_tokenizer(model_args: ModelArguments, texts, training_args):
    """A tokenizer trained on `texts` (tiny models, reused on resume) or loaded from the model path."""
    from radmetrics.inference.loading.hub import load_tokenizer

    if model_args.model_name_or_path not in TINY_MODELS:
        return load_tokenizer(model_args.model_name_or_path)
    from .tiny import train_wordpiece_tokenizer

    directory = Path(training_args.output_dir) / "tokenizer"
    build_once(directory, lambda: train_wordpiece_tokenizer(texts, directory, vocab_size=model_args.tiny_vocab_size))
    return load_tokenizer(directory, min_vocab=50)


def encoder_config(model_args: ModelArguments, tokenizer, **overrides):
    """The encoder's config: a tiny random one, or the pretrained model's with `overrides`."""
    from transformers import AutoConfig

    from radmetrics.inference.loading.hub import resolve_model_path

    from .tiny import tiny_bert_config, tiny_deberta_v2_config

    if model_args.model_name_or_path == "tiny-bert":
        return tiny_bert_config(len(tokenizer), hidden_size=model_args.tiny_hidden_size, **overrides)
    if model_args.model_name_or_path == "tiny-deberta":
        return tiny_deberta_v2_config(len(tokenizer), hidden_size=model_args.tiny_hidden_size, **overrides)
    return AutoConfig.from_pretrained(resolve_model_path(model_args.model_name_or_path), **overrides)


def build_wrapped_model(model_cls, model_args: ModelArguments, tokenizer, **config_kwargs):
    """A model that wraps an encoder (CheXbert-style labeler, span extractor): built with `_from_config`,
    which honours a ZeRO-3 zero.Init context (calling the class does not), then given the pretrained
    encoder's weights unless the encoder is a tiny random one."""
    config = model_cls.config_class.from_encoder(encoder_config(model_args, tokenizer), **config_kwargs)
    model = model_cls._from_config(config)
    weights = pretrained_weights(model_args)
    if weights:
        from transformers import AutoModel

        model.encoder = AutoModel.from_pretrained(weights)
    return model


def pretrained_weights(model_args: ModelArguments) -> str | None:
    """Path of pretrained weights to start from, or None for a random tiny encoder."""
    from radmetrics.inference.loading.hub import resolve_model_path

    return None if model_args.model_name_or_path in TINY_MODELS else resolve_model_path(model_args.model_name_or_path)


def start_run(component: str, recipe: str, model_args, data_args, training_args, provenance: dict, extra_args=()) -> Path:
    """Seed every RNG and write the run manifest. Recipes call this before building their model: the Trainer
    seeds only when it is constructed, after a random model (or a new head) has already been initialised."""
    from transformers import set_seed

    set_seed(training_args.seed)
    run_dir = Path(training_args.output_dir)
    if is_main_process():
        config = {**asdict(model_args), **asdict(data_args), **{k: v for a in extra_args for k, v in asdict(a).items()},
                  "training": training_args.to_dict()}
        write_run_manifest(run_dir, component=component, recipe=recipe, base_model=model_args.model_name_or_path,
                           config=config, data_provenance=provenance)
    return run_dir


def train_and_finish(trainer, tokenizer, run_dir: Path, evaluate) -> dict:
    """Train (resuming from the newest complete checkpoint), save `final/` with its marker, and record
    `evaluate(final_dir)` (held-out results: the recipe's metrics and its trivial baselines) for the card.

    Evaluation runs on the main process only, on the saved `final/` model: what gets exported is what is
    measured, and it sidesteps ZeRO-3's partitioned parameters (the save gathers them)."""
    final = run_dir / "final"
    if is_complete(final):
        print(f"{final} is complete; nothing to train (delete it or use a new output_dir to train again)")
        return read_eval_results(run_dir)
    trainer.add_callback(CompletionMarker())
    resume = last_complete_checkpoint(run_dir)
    if resume:
        print(f"resuming from {resume}")
    processes = int(os.environ.get("WORLD_SIZE", trainer.accelerator.num_processes))  # accelerate says 1 for DeepSpeed on CPU
    print(f"training on {processes} process(es)"
          + (" with DeepSpeed" if trainer.is_deepspeed_enabled else ""))
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    trainer.save_model(str(final))
    results = {}
    if is_main_process():
        tokenizer.save_pretrained(final)
        if trainer.is_deepspeed_enabled:  # load final/ as a whole model, not ZeRO-3 partitions
            from transformers.integrations.deepspeed import unset_hf_deepspeed_config

            unset_hf_deepspeed_config()
        results = evaluate(final)
        write_eval_results(run_dir, results)
        mark_complete(final)
        print({k: round(v, 4) for k, v in results.items() if isinstance(v, float)})
    close_process_group()
    return results


def close_process_group() -> None:
    """All ranks wait for the main process, then leave the process group together. A rank that exits
    while others still hold the group can abort in a communication thread's destructor ("terminate
    called without an active exception"), which the launcher reports as a failed run."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def predict_logits(model, dataset, collator, batch_size: int = 64):
    """Logits of `model` over a tokenized dataset (columns the collator accepts; `labels` are dropped),
    padded to a common length for token-level outputs."""
    import numpy as np
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.eval().to(device)
    outputs = []
    features = [{k: v for k, v in row.items() if k != "labels"} for row in dataset]
    with torch.no_grad():
        for start in range(0, len(features), batch_size):
            batch = collator(features[start:start + batch_size])
            logits = model(**{k: v.to(device) for k, v in batch.items()})["logits"]
            outputs.append(logits.float().cpu().numpy())
    if outputs and outputs[0].ndim == 3:  # token classification: pad the sequence axis
        width = max(o.shape[1] for o in outputs)
        outputs = [np.pad(o, ((0, 0), (0, width - o.shape[1]), (0, 0))) for o in outputs]
    return np.concatenate(outputs)
