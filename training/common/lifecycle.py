"""A recipe run's life: seed and manifest (`start_run`), then train, resuming from the newest complete checkpoint, save
`final/`, evaluate it and mark it complete (`train_and_finish`), with step checkpoints marked complete as they are
written and a save-and-stop when the SLURM launcher asks. Shared by the encoder and GREEN recipes."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from transformers import TrainerCallback

from radmetrics.inference.files import atomic

from .distributed import barrier, close_process_group, is_main_process
from .logs import configure_logging, logger
from .resume_policy import check_same_run
from .run_dir import (
    RUN_MANIFEST,
    is_complete,
    last_complete_checkpoint,
    mark_complete,
    read_eval_results,
    write_eval_results,
    write_run_manifest,
)
from .throughput import ThroughputLogger


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


def start_run(
    component: str,
    recipe: str,
    model_args,
    data_args,
    training_args,
    provenance: dict,
    extra_args=(),
    label_map: dict | None = None,
) -> Path:
    """Seed every RNG and write the run manifest. Recipes call this before building their model: the Trainer
    seeds only when it is constructed, after a random model (or a new head) has already been initialised.
    `label_map`: the labels the run trains when they are the user's own (`radmetrics data import`), not the
    component schema's."""
    from transformers import set_seed

    set_seed(training_args.seed)
    run_dir = Path(training_args.output_dir)
    config = {
        **asdict(model_args),
        **asdict(data_args),
        **{k: v for a in extra_args for k, v in asdict(a).items()},
        "training": training_args.to_dict(),
    }
    identity = {"component": component, "recipe": recipe, "base_model": model_args.model_name_or_path}
    changed = check_same_run(run_dir, identity, asdict(data_args), config)  # every rank refuses another run
    if is_main_process():
        if (run_dir / RUN_MANIFEST).is_file():
            configure_logging()
            logger.info("%s holds this run: it resumes from its newest complete checkpoint", run_dir)
            for line in changed:
                logger.info("changed since the run started: %s", line)
        write_run_manifest(
            run_dir,
            component=component,
            recipe=recipe,
            base_model=model_args.model_name_or_path,
            config=config,
            data_provenance=provenance,
            extra={"label_map": label_map} if label_map else None,
        )
    return run_dir


def recipe_trainer(
    trainer_class, model, training_args, datasets: tuple, collator, compute_metrics, tokenizer, **extra
):
    """The encoder recipes' Trainer: `datasets` is (train, validation); `extra` are the trainer class's own
    arguments (a head learning rate, class weights, an end-to-end evaluation)."""
    data = dict(train_dataset=datasets[0], eval_dataset=datasets[1], data_collator=collator)
    return trainer_class(
        model=model, args=training_args, compute_metrics=compute_metrics, processing_class=tokenizer, **data, **extra
    )


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
    atomic.write_text(path, "".join(json.dumps(record) + "\n" for record in records))
    return path
