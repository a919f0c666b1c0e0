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

from .logs import configure_logging, logger
from .run_dir import (
    is_complete,
    last_complete_checkpoint,
    mark_complete,
    read_eval_results,
    write_eval_results,
    write_run_manifest,
)
from .throughput import ThroughputLogger

TINY_MODELS = ("tiny-bert", "tiny-deberta")


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        default="tiny-bert",
        metadata={
            "help": (
                "a local path or Hub id (local first), 'default' for the bundled MiniLM, or tiny-bert / tiny-deberta "
                "for a random tiny encoder with a WordPiece tokenizer trained on the training text"
            )
        },
    )
    tiny_vocab_size: int = field(default=2000, metadata={"help": "vocabulary of the tiny tokenizer"})
    tiny_hidden_size: int = field(default=64, metadata={"help": "hidden size of the tiny encoder"})


@dataclass
class DataArguments:
    silver_dir: str | None = field(
        default=None,
        metadata={
            "help": (
                "output of `radmetrics data silver`; when unset, silver labels of the bundled IU corpus are built "
                "into OUTPUT_DIR/silver"
            )
        },
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "truncate the training split (unset or 0: all of it)"}
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    max_seq_length: int = field(default=128, metadata={"help": "tokens per example after tokenisation"})
    preprocessing_num_workers: int | None = field(
        default=None,
        metadata={
            "help": (
                "processes for tokenisation (datasets.map; run on global rank 0 first, the others then read its cache)"
            )
        },
    )


class CompletionMarker(TrainerCallback):
    """Mark checkpoint-<step> complete once the Trainer has written all of it (on_save runs after the save)."""

    def on_save(self, args, state, control, **kwargs):
        if is_main_process():
            checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if checkpoint.is_dir():
                mark_complete(checkpoint)


class SaveAndStopOnRequest(TrainerCallback):
    """Save a complete checkpoint and stop when the SLURM launcher asks: it creates the marker file
    (RADMETRICS_REQUEUE_MARKER) shortly before the job's time limit, waits for the run to end, and requeues the job,
    which then resumes from that checkpoint. All ranks decide at the same step (the flag is reduced over ranks)."""

    def __init__(self, marker: str | Path):
        self.marker = Path(marker)
        self.requested = False

    def _requested_on_any_rank(self) -> bool:
        import torch
        import torch.distributed as dist

        flag = self.marker.exists()
        if not (dist.is_available() and dist.is_initialized()):
            return flag
        device = (
            torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")
        )
        value = torch.tensor([int(flag)], device=device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item())

    def on_step_end(self, args, state, control, **kwargs):
        if self._requested_on_any_rank():
            self.requested = True
            control.should_save = True
            control.should_training_stop = True


def is_main_process() -> bool:
    """Global rank 0, read from the launcher's environment (torchrun/accelerate set RANK), so it is known before
    the Trainer and its process group exist."""
    return int(os.environ.get("RANK", "0")) == 0


def build_once(marker: Path, build, timeout_s: float = 3600) -> None:
    """Global rank 0 runs `build` unless `marker` exists, holding a file lock beside it, then writes the marker; every
    other rank, on every node, waits for the marker. Keyed on the global rank, two nodes sharing a filesystem never
    build the same directory at once, and the lock keeps a second job on the same output_dir from racing the first.
    (A multi-node run needs its output_dir on a filesystem all nodes share: checkpoints and resume rely on it too.)"""
    if is_main_process():
        from filelock import FileLock

        marker.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{marker}.lock"):
            if not is_complete(marker):
                build()
                marker.mkdir(parents=True, exist_ok=True)
                mark_complete(marker)
        return
    waited = 0.0
    while not is_complete(marker):
        if waited > timeout_s:
            raise TimeoutError(
                f"rank {os.environ.get('RANK')}: gave up waiting for {marker} from rank 0 "
                "(is the output_dir on a filesystem every node shares?)"
            )
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
            write_silver(
                reports,
                assign_splits(reports),
                root,
                labelers=[labeler],
                provenance={"corpus": "iu_xray", "path": "bundled", "split_by": "text"},
            )

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


def start_run(
    component: str, recipe: str, model_args, data_args, training_args, provenance: dict, extra_args=()
) -> Path:
    """Seed every RNG and write the run manifest. Recipes call this before building their model: the Trainer
    seeds only when it is constructed, after a random model (or a new head) has already been initialised."""
    from transformers import set_seed

    set_seed(training_args.seed)
    run_dir = Path(training_args.output_dir)
    if is_main_process():
        config = {
            **asdict(model_args),
            **asdict(data_args),
            **{k: v for a in extra_args for k, v in asdict(a).items()},
            "training": training_args.to_dict(),
        }
        write_run_manifest(
            run_dir,
            component=component,
            recipe=recipe,
            base_model=model_args.model_name_or_path,
            config=config,
            data_provenance=provenance,
        )
    return run_dir


def train_and_finish(
    trainer, tokenizer, run_dir: Path, evaluate, every_rank: bool = False, *, sequence_length: int
) -> dict:
    """Train (resuming from the newest complete checkpoint), save `final/` with its marker, and record
    `evaluate(final_dir)` (held-out results: the recipe's metrics and its trivial baselines) for the card.

    Evaluation runs on the saved `final/` model, so what gets exported is what is measured (and ZeRO-3's partitioned
    parameters are out of the way: the save gathers them). By default the main process evaluates while the others wait
    (encoders: seconds). With `every_rank`, every rank calls `evaluate(final)` on its own device and is expected to
    take its share of the held-out data (`rank_and_world`, `gather_to_all`): a 7B GREEN model generating for the
    test split would otherwise keep every other rank waiting past the process-group timeout."""
    configure_logging()
    final = run_dir / "final"
    if is_complete(final):
        logger.info("%s is complete; nothing to train (delete it or use a new output_dir to train again)", final)
        return read_eval_results(run_dir)
    trainer.add_callback(CompletionMarker())
    if trainer.args.include_num_input_tokens_seen in (False, "no"):
        trainer.args.include_num_input_tokens_seen = "non_padding"
    trainer.add_callback(ThroughputLogger(sequence_length))
    resume = last_complete_checkpoint(run_dir)
    if resume:
        logger.info("resuming from %s", resume)
    processes = trainer.accelerator.num_processes
    logger.info("training on %d process(es)%s", processes, " with DeepSpeed" if trainer.is_deepspeed_enabled else "")
    stop = None
    if os.environ.get("RADMETRICS_REQUEUE_MARKER"):
        stop = SaveAndStopOnRequest(os.environ["RADMETRICS_REQUEUE_MARKER"])
        trainer.add_callback(stop)
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    if stop is not None and stop.requested:
        logger.info(
            "saved checkpoint-%d and stopped as the launcher asked; the requeued job resumes from it",
            trainer.state.global_step,
        )
        close_process_group()
        return {}
    trainer.save_model(str(final))
    if is_main_process():
        tokenizer.save_pretrained(final)
    if trainer.is_deepspeed_enabled:  # load final/ as a whole model, not ZeRO-3 partitions
        from transformers.integrations.deepspeed import unset_hf_deepspeed_config

        unset_hf_deepspeed_config()
    results = {}
    if every_rank:
        barrier()  # final/ is written before any rank reads it
        results = evaluate(final)
    elif is_main_process():
        results = evaluate(final)
    if is_main_process():
        write_eval_results(run_dir, {**results, **selected_checkpoint(trainer)})
        mark_complete(final)
        logger.info("%s", {k: round(v, 4) for k, v in results.items() if isinstance(v, float)})
    close_process_group()
    return results


def selected_checkpoint(trainer) -> dict:
    """Which checkpoint `load_best_model_at_end` kept as final/, and its validation score, for the eval results."""
    state, args = trainer.state, trainer.args
    if not (args.load_best_model_at_end and state.best_model_checkpoint):
        return {}
    return {
        "selected_checkpoint": Path(state.best_model_checkpoint).name,
        f"selected_by_validation_{args.metric_for_best_model.removeprefix('eval_')}": state.best_metric,
    }


TEST_PREDICTIONS = "test_predictions.jsonl"


def write_test_predictions(run_dir: Path, records: list[dict]) -> Path:
    """RUN_DIR/test_predictions.jsonl: one line per test example (its ids, gold labels, the model's and the trivial
    baselines' predictions), so that held-out scores can be resampled (bootstrap intervals, paired comparisons of two
    runs) without the models."""
    import json

    path = Path(run_dir) / TEST_PREDICTIONS
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def rank_and_world() -> tuple[int, int]:
    """This process's rank and the number of processes (the process group's, which DeepSpeed on CPU sets up even
    when accelerate reports a single process)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def gather_to_all(items: list) -> list:
    """Every rank's `items`, concatenated in rank order, on every rank."""
    import torch.distributed as dist

    _, world = rank_and_world()
    if world == 1:
        return list(items)
    parts: list = [None] * world
    dist.all_gather_object(parts, list(items))
    return [item for part in parts for item in part]


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
            batch = collator(features[start : start + batch_size])
            logits = model(**{k: v.to(device) for k, v in batch.items()})["logits"]
            outputs.append(logits.float().cpu().numpy())
    if outputs and outputs[0].ndim == 3:  # token classification: pad the sequence axis
        width = max(o.shape[1] for o in outputs)
        outputs = [np.pad(o, ((0, 0), (0, width - o.shape[1]), (0, 0))) for o in outputs]
    return np.concatenate(outputs)
