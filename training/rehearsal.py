"""A CPU rehearsal of a GPU config: the same YAML, through the real SLURM launcher, to the end.

`radmetrics rehearse configs/green/sft/mistral-7b.yaml` takes the config as it is and changes only what a CPU cannot
run: the model becomes a tiny random model of the same architecture family (`lookalike.py`), the step count and batch
are cut, bf16 and flash-attn 2 give way to fp32 and SDPA, and the data is built from the bundled IU X-ray corpus
when the config names a directory that only a cluster has. Everything else (recipe, DeepSpeed JSON, accelerate config,
save/eval schedule, packing, LoRA, the final evaluation over ranks) is the config's own.

The job runs through `slurm/launch.sbatch` with stand-in `srun` and `scontrol` (`slurm/rehearsal/`) as 2 nodes x 1
process on gloo (DeepSpeed's CPU accelerator), then:
  1. SIGUSR1 goes to the batch script, as SLURM sends it before the time limit, once the launcher has installed its
     handler and started the ranks: the run must save a complete checkpoint at its next step end, stop, and have the
     job requeued. (Signalling before the first step, not after the first scheduled checkpoint, keeps this
     deterministic: a config whose steps take milliseconds would otherwise finish before the signal lands.)
  2. the requeued job must resume from that checkpoint, write its scheduled step checkpoints, train to the end, run
     the final evaluation and mark final/ complete;
  3. the run is exported and reloaded with plain `transformers.AutoModel*.from_pretrained`, and runs a forward pass
     (a finding-pair judge is also loaded as semantic_green's `judge=model` loads it, and decides two pairs).
Any step that fails fails the rehearsal, with the log of the attempt that failed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from radmetrics.inference.files import atomic

from .lookalike import CAUSAL_FAMILIES, FAMILIES, build_lookalike, family_of
from .recipes import recipe_for_config

REPO = Path(__file__).resolve().parents[1]
STAND_INS = REPO / "slurm" / "rehearsal"
NODES = 2
MAX_STEPS = 8
SAVE_STEPS = 2


class RehearsalError(RuntimeError):
    pass


def failure(message: str, log: Path, lines: int = 60) -> RehearsalError:
    """An error that names the log and quotes its end, so a CI failure shows its cause after the log is gone."""
    tail = log.read_text(errors="replace").splitlines()[-lines:] if log.is_file() else []
    return RehearsalError(f"{message}; see {log}" + ("\n--- end of the log ---\n" + "\n".join(tail) if tail else ""))


@dataclass
class Rehearsal:
    """What a rehearsal ran and what it found (written to WORKDIR/<name>/rehearsal.json)."""

    config: str
    recipe: str
    base_model: str
    family: str
    deepspeed: str | None
    accelerate_config: str
    overrides: list[str]
    saved_on_signal: int | None = None
    resumed_from: int | None = None
    final_step: int | None = None
    eval_results: dict = field(default_factory=dict)
    export: str | None = None
    reloaded_as: str | None = None
    seconds: float = 0.0


def base_model_of(config: dict, configs_root: Path) -> str:
    """The Hub base model a config starts from: its own model_name_or_path, or, for a stage-2 config that starts from
    a stage-1 run's final/, the base model of the config that writes that run."""
    name = str(config.get("model_name_or_path", ""))
    if name in FAMILIES:
        return name
    if name.endswith("/final"):
        for path in sorted(configs_root.rglob("*.yaml")):
            other = yaml.safe_load(path.read_text()) or {}
            if isinstance(other, dict) and other.get("output_dir") == name[: -len("/final")]:
                return base_model_of(other, configs_root)
    raise RehearsalError(
        f"cannot tell the architecture of model_name_or_path {name!r}: neither a known base model "
        f"({', '.join(sorted(FAMILIES))}) nor the final/ of a run that a config in {configs_root} writes"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_cli(args: list[str], log: Path) -> None:
    with log.open("w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "radmetrics.inference.cli", *args], stdout=out, stderr=subprocess.STDOUT, cwd=REPO
        )
    if done.returncode:
        raise failure(f"radmetrics {' '.join(args)} failed", log)


DATA_FLAGS = {
    "green/pretrain": "--corpus_dir",
    "green/sft": "--pairs_dir",
    "crimson/sft": "--annotations_dir",
    "judge/pairs": "--pairs_dir",
}
DATA_LIMITS = {  # a few records of whatever data the rehearsal reads, the user's or the bundled corpus'
    "green/pretrain": ["--max_train_samples", "600", "--max_eval_samples", "16"],
    "green/sft": ["--max_train_samples", "200", "--max_eval_samples", "8"],
    "crimson/sft": ["--max_train_samples", "200", "--max_eval_samples", "8"],
    "judge/pairs": ["--max_train_samples", "256", "--max_eval_samples", "64"],
}
JUDGE_PAIRS_PER_LABEL = "100"  # the rehearsal's finding pairs: a few of every label, built in seconds
SILVER_LIMITS = ["--max_train_samples", "256", "--max_eval_samples", "32"]


def data_flag(recipe: str) -> str:
    """The recipe option naming its data folder."""
    return DATA_FLAGS.get(recipe, "--silver_dir")


def user_data_overrides(recipe: str, config_path: Path, user_overrides: list[str]) -> list[str] | None:
    """With the user's data folder among `user_overrides`: the rehearsal's limits on it (a few records), after
    checking it, and every override, as the real run will (the recipe's `check_data`: its records, prompt and units);
    a RehearsalError in one line before anything is built or launched. None when the user names no data folder."""
    from .config import ConfigError, field_names
    from .recipes import load_recipe

    module = load_recipe(recipe)
    flags = [arg.split("=", 1)[0][2:] for arg in user_overrides if arg.startswith("--")]
    unknown = [flag for flag in flags if flag not in field_names(module.ARGUMENT_TYPES)]
    if unknown:
        raise RehearsalError(f"{config_path.name}: --{unknown[0]} is not an option of {recipe}")
    if data_flag(recipe)[2:] not in flags:
        return None
    if hasattr(module, "check_data"):
        from radmetrics.inference.files.report_io import ReportFileError

        try:
            module.check_data(str(config_path), user_overrides)
        except (ReportFileError, ConfigError, ValueError) as exc:  # RecordFormatError is a ReportFileError
            raise RehearsalError(f"{config_path.name} with your data: {exc}") from None
    return DATA_LIMITS.get(recipe, SILVER_LIMITS)


def _absolute_data_path(overrides: list[str], flag: str) -> list[str]:
    """The user's data folder as an absolute path: the job runs in the repository, not where the user stands."""
    out = list(overrides)
    for i, arg in enumerate(out):
        if arg == flag and i + 1 < len(out):
            out[i + 1] = str(Path(out[i + 1]).resolve())
        elif arg.startswith(flag + "="):
            out[i] = f"{flag}={Path(arg.split('=', 1)[1]).resolve()}"
    return out


def prepare_data(recipe: str, config: dict, workdir: Path) -> list[str]:
    """Overrides pointing the config's data at bundled-corpus data built once under WORKDIR/data (a config names
    directories such as data/green_annotations that exist only where the lab built them)."""
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    if recipe == "green/pretrain":
        corpus = data / "pretrain_corpus"
        if not (corpus / "hf").is_dir():
            _run_cli(["data", "pretrain-corpus", "--out", str(corpus)], data / "pretrain_corpus.log")
        return ["--corpus_dir", str(corpus), *DATA_LIMITS[recipe]]
    if recipe == "green/sft":
        pairs = data / "green_pairs"
        if not (pairs / "train.jsonl").is_file():
            _run_cli(
                [
                    "data",
                    "pairs",
                    "--out",
                    str(pairs),
                    "--heuristics",
                    "remove_shuffle",
                    "recombine",
                    "--per-heuristic",
                    "300",
                ],
                data / "green_pairs.log",
            )
        return ["--pairs_dir", str(pairs), *DATA_LIMITS[recipe]]
    if recipe == "crimson/sft":  # the programmatic CRIMSON teacher's answers to built pairs (no LLM)
        pairs, annotations = data / "crimson_pairs", data / "crimson_annotations"
        if not (annotations / "train.jsonl").is_file():
            if not (pairs / "train.jsonl").is_file():  # a finished `data pairs` folder is refused, not rebuilt
                _run_cli(
                    [
                        "data",
                        "pairs",
                        "--out",
                        str(pairs),
                        "--heuristics",
                        "radgraph_permute",
                        "--per-heuristic",
                        "300",
                    ],
                    data / "crimson_pairs.log",
                )
            files = [str(pairs / f"{split}.jsonl") for split in ("train", "validation", "test")]
            _run_cli(
                ["data", "annotate", "--format", "crimson", "--pairs", *files, "--out", str(annotations)],
                data / "crimson_annotations.log",
            )
        return ["--annotations_dir", str(annotations), *DATA_LIMITS[recipe]]
    if recipe == "judge/pairs":  # the finding-pair judge's pairs of the bundled corpus, a few per label
        pairs = data / "judge_pairs"
        if not (pairs / "stats.json").is_file():  # written last by `data judge-pairs`
            _run_cli(
                ["data", "judge-pairs", "--out", str(pairs), "--per-label", JUDGE_PAIRS_PER_LABEL],
                data / "judge_pairs.log",
            )
        return ["--pairs_dir", str(pairs), *DATA_LIMITS[recipe]]
    silver = data / "silver"
    if not (silver / ".complete").is_file():
        _run_cli(
            ["data", "silver", "--out", str(silver), "--labelers", "chexpert", "rate_ner", "radgraph"],
            data / "silver.log",
        )
        (silver / ".complete").touch()
    return ["--silver_dir", str(silver), *SILVER_LIMITS]


def rehearsal_overrides(
    recipe: str, config: dict, model_dir: Path, output_dir: Path, deepspeed: str | None = None
) -> list[str]:
    """What the rehearsal changes in the config, as recipe flags (applied after the YAML). A config without DeepSpeed
    runs with `use_cpu`: without it, accelerate finds no GPU and gives each rank a world of its own (every rank trains
    the whole run alone), where a cluster's CUDA ranks would share one; DeepSpeed's ranks find DS_ACCELERATOR=cpu."""
    flags = {
        "model_name_or_path": model_dir,
        "output_dir": output_dir,
        "max_steps": MAX_STEPS,
        "save_strategy": "steps",
        "save_steps": SAVE_STEPS,
        "logging_steps": 1,
        "report_to": "none",
        "bf16": "false",
        "per_device_train_batch_size": min(int(config.get("per_device_train_batch_size", 8)), 4),
        "per_device_eval_batch_size": 8,
        "gradient_accumulation_steps": min(int(config.get("gradient_accumulation_steps", 1)), 2),
    }
    if not deepspeed:
        flags["use_cpu"] = "true"
    if config.get("eval_strategy", "no") != "no":  # load_best_model_at_end needs eval and save on the same schedule
        flags.update(eval_strategy="steps", eval_steps=SAVE_STEPS)
    if recipe.startswith(("green/", "crimson/")):
        flags["attn_implementation"] = "sdpa"  # flash-attn 2 needs a GPU
        flags["final_eval_samples"] = 8
    if recipe == "green/pretrain" and config.get("pack_tokens"):
        flags["pack_tokens"] = 2048  # SDPA materialises the block-diagonal mask: 16k x 16k per row would not fit a CPU
    if recipe in ("green/sft", "crimson/sft"):
        flags.update(max_new_tokens=16, dataset_num_proc=2)
    if "preprocessing_num_workers" in config:
        flags["preprocessing_num_workers"] = 2
    return [item for key, value in flags.items() for item in (f"--{key}", str(value))]


LAUNCHER_STARTED = re.compile(r"^launch\.sbatch: .* rendezvous ", re.MULTILINE)  # printed after its USR1 trap is set


def _launch(plan: Rehearsal, env: dict, log: Path, signal_when_started: bool, timeout_s: float) -> int:
    """One SLURM job attempt through slurm/launch.sbatch; with `signal_when_started`, SIGUSR1 goes to the batch
    script as soon as it has set its trap and started the ranks."""
    command = [
        "bash",
        str(REPO / "slurm" / "launch.sbatch"),
        plan.recipe,
        plan.config,
        plan.accelerate_config,
        "--",
        *plan.overrides,
    ]
    env = {**env, "MAIN_PROCESS_PORT": str(_free_port())}
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        started, signalled = time.monotonic(), False
        while process.poll() is None:
            if time.monotonic() - started > timeout_s:
                os.killpg(process.pid, signal.SIGKILL)  # the job's own session: the launcher and every rank
                raise failure(f"{plan.config}: the job ran past {timeout_s:.0f} s", log)
            if signal_when_started and not signalled and LAUNCHER_STARTED.search(log.read_text(errors="replace")):
                process.send_signal(signal.SIGUSR1)
                signalled = True
            time.sleep(0.2)
    if signal_when_started and not signalled:
        raise failure(
            f"{plan.config}: the job ended before the launcher started the ranks (exit {process.returncode})", log
        )
    return process.returncode


def _checkpoint_steps(run_dir: Path) -> list[int]:
    from .common.run_dir import complete_checkpoints

    return [int(p.name.split("-")[1]) for p in complete_checkpoints(run_dir)]


def _auto_class(component: str, family: str):
    """The transformers Auto class that loads an export of `component` (radmetrics' own architectures register
    themselves with AutoModel on import)."""
    from transformers import (
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
    )

    import radmetrics.inference.metrics.chexbert.labeler  # noqa: F401  (registers the CheXbert labeler)
    import radmetrics.inference.models.span  # noqa: F401  (registers the span extractor)

    if family in CAUSAL_FAMILIES:
        return AutoModelForCausalLM
    return {"rate_ner_iob": AutoModelForTokenClassification, "finding_judge": AutoModelForSequenceClassification}.get(
        component, AutoModel
    )


def _reload(export: Path, family: str) -> str:
    """Load the export with plain transformers Auto classes (radmetrics' own architectures register themselves with
    AutoModel on import) and run a forward pass over a report."""
    import torch
    from transformers import AutoTokenizer

    component = json.loads((export / "radmetrics.json").read_text())["component"]
    auto = _auto_class(component, family)
    model = auto.from_pretrained(export).eval()
    tokenizer = AutoTokenizer.from_pretrained(export)
    with torch.no_grad():
        if component == "finding_judge":  # a sequence-pair classifier: a reference and a candidate finding
            outputs = model(**tokenizer(["Small left effusion."], ["Large left effusion."], return_tensors="pt"))
        elif component in ("rate_ner_span", "radgraph"):
            from radmetrics.inference.models.span_extraction import SpanCollator, encode_span_inputs

            words = "Heart size is normal . No pleural effusion .".split()
            outputs = model(
                **SpanCollator(tokenizer)(encode_span_inputs(tokenizer, [words], model.config.max_span_width, 64))
            )
        else:
            outputs = model(**tokenizer(["Heart size is normal. No pleural effusion."], return_tensors="pt"))
    logits = outputs["logits"]
    if not torch.isfinite(logits).all():
        raise RehearsalError(f"{export}: the reloaded model's logits are not finite")
    reloaded = f"{auto.__name__} -> {type(model).__name__}"
    if component == "finding_judge":
        reloaded += _judge_as_scoring_loads_it(export)
    return reloaded


def _judge_as_scoring_loads_it(export: Path) -> str:
    """A finding_judge export loaded as semantic_green's `judge=model` loads it (its manifest and labels checked
    against the judge's labels) and deciding two pairs."""
    from radmetrics.inference.loading.checkpoint import CheckpointError
    from radmetrics.inference.metrics.semantic_green.judge import FindingJudge

    pairs = [("Small left effusion.", "Large left effusion."), ("No pneumothorax.", "Right pneumothorax.")]
    try:
        decisions = FindingJudge(export, batch_size=2).decide(pairs)
    except CheckpointError as exc:
        raise RehearsalError(f"{export}: semantic_green cannot load the judge: {exc}") from None
    if len(decisions) != len(pairs):
        raise RehearsalError(f"{export}: the judge decided {len(decisions)} of {len(pairs)} pairs")
    return "; FindingJudge (semantic_green judge=model) decides pairs"


def _job_env(job_id: str, job_dir: Path, requeues: Path) -> dict:
    """The environment of the rehearsal's SLURM job: 2 nodes of 1 CPU process each, the stand-ins first on PATH."""
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(STAND_INS), str(Path(sys.executable).parent), os.environ["PATH"]]),
        "SLURM_NNODES": str(NODES),
        "SLURM_JOB_ID": job_id,
        "SLURM_JOB_NODELIST": "localhost",
        "GPUS_PER_NODE": "1",
        "SLURM_CPUS_PER_TASK": "1",
        "RADMETRICS_REHEARSAL_REQUEUES": str(requeues),
        "RADMETRICS_REQUEUE_MARKER": str(job_dir / "requeue-marker"),
        "DS_ACCELERATOR": "cpu",
        "ACCELERATE_EXTRA_ARGS": "--mixed_precision no --dynamo_backend no",
        "HF_HUB_OFFLINE": "1",
        "WANDB_MODE": "disabled",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def _signal_then_resume(plan: Rehearsal, env: dict, job_dir: Path, timeout_s: float) -> None:
    """The job's first attempt, signalled as the ranks start (it must save, stop and be requeued), then the requeued
    attempt, which must resume from that checkpoint, finish and record its final evaluation (in `plan`)."""
    run_dir, logs, requeues, job_id = job_dir / "run", job_dir / "logs", job_dir / "requeues.txt", env["SLURM_JOB_ID"]
    first_log = logs / "attempt-1.log"
    status = _launch(plan, env, first_log, signal_when_started=True, timeout_s=timeout_s)
    if status != 0:
        raise failure(f"{plan.config}: the first attempt failed (exit {status})", first_log)
    if not requeues.is_file() or requeues.read_text().split() != [job_id]:
        raise failure(f"{plan.config}: SIGUSR1 did not lead to a requeue", first_log)
    stopped = re.search(r"saved checkpoint-(\d+) and stopped", first_log.read_text())
    if not stopped or (run_dir / "final").exists():
        raise failure(f"{plan.config}: the run did not save and stop on the launcher's request", first_log)
    plan.saved_on_signal = int(stopped.group(1))
    if plan.saved_on_signal not in _checkpoint_steps(run_dir):
        raise failure(f"{plan.config}: checkpoint-{plan.saved_on_signal} is not marked complete", first_log)

    second_log = logs / "attempt-2.log"
    status = _launch(
        plan, {**env, "SLURM_RESTART_COUNT": "1"}, second_log, signal_when_started=False, timeout_s=timeout_s
    )
    text = second_log.read_text()
    if status != 0:
        raise failure(f"{plan.config}: the requeued attempt failed (exit {status})", second_log)
    resumed = re.search(r"resuming from \S*checkpoint-(\d+)", text)
    plan.resumed_from = int(resumed.group(1)) if resumed else None
    if plan.resumed_from != plan.saved_on_signal:
        raise failure(
            f"{plan.config}: the requeued job resumed from checkpoint-{plan.resumed_from}, not from "
            f"checkpoint-{plan.saved_on_signal} saved on the signal",
            second_log,
        )
    from .common.run_dir import is_complete, read_eval_results

    if not is_complete(run_dir / "final"):
        raise failure(f"{plan.config}: final/ is not marked complete", second_log)
    plan.final_step = max(_checkpoint_steps(run_dir), default=None)
    plan.eval_results = read_eval_results(run_dir)
    if not plan.eval_results:
        raise failure(f"{plan.config}: the final evaluation recorded nothing", second_log)


def rehearse(
    config_path: str | Path,
    workdir: str | Path,
    deepspeed: str | None = None,
    timeout_s: float = 1800,
    user_overrides: list[str] | None = None,
) -> Rehearsal:
    """Rehearse one GPU config end to end on CPU (see the module docstring); raises RehearsalError on any failure.
    `user_overrides`: the options the real run will get (`radmetrics rehearse CONFIG -- ...`); a data folder among
    them is read and checked first, and the rehearsal trains on a few of its records instead of bundled data."""
    started = time.monotonic()
    config_path = Path(config_path).resolve()
    config = yaml.safe_load(config_path.read_text())
    recipe = recipe_for_config(config_path, REPO / "configs")
    user_overrides = _absolute_data_path(list(user_overrides or ()), data_flag(recipe))
    user_limits = user_data_overrides(recipe, config_path, user_overrides)
    base = base_model_of(config, REPO / "configs")
    family = family_of(base)
    deepspeed = deepspeed or config.get("deepspeed")
    accelerate_config = (
        "configs/accelerate/zero3_offload.yaml"
        if deepspeed and "offload" in deepspeed
        else "configs/accelerate/zero3.yaml"
        if deepspeed
        else "configs/accelerate/ddp.yaml"
    )
    name = config_path.stem + (
        "-" + Path(deepspeed).stem if deepspeed and deepspeed != config.get("deepspeed") else ""
    )
    workdir = Path(workdir).resolve()
    job_dir = workdir / recipe.replace("/", "_") / name
    run_dir, logs = job_dir / "run", job_dir / "logs"
    shutil.rmtree(run_dir, ignore_errors=True)  # a run left by an earlier rehearsal would count as already finished
    logs.mkdir(parents=True, exist_ok=True)

    model_dir = workdir / "lookalikes" / base.replace("/", "--")
    if not (model_dir / "lookalike.json").is_file():
        from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

        build_lookalike(base, [r.text for r in iu_xray_corpus() if r.text], model_dir)
    data = user_limits if user_limits is not None else prepare_data(recipe, config, workdir)
    overrides = user_overrides + data + rehearsal_overrides(recipe, config, model_dir, run_dir, deepspeed)
    if deepspeed != config.get("deepspeed"):
        overrides += ["--deepspeed", str(deepspeed)]
    plan = Rehearsal(
        config=str(config_path.relative_to(REPO)),
        recipe=recipe,
        base_model=base,
        family=family,
        deepspeed=deepspeed,
        accelerate_config=accelerate_config,
        overrides=overrides,
    )

    requeues = job_dir / "requeues.txt"
    requeues.unlink(missing_ok=True)
    job_id = f"rehearsal-{recipe.replace('/', '-')}-{name}"
    env = _job_env(job_id, job_dir, requeues)

    _signal_then_resume(plan, env, job_dir, timeout_s)

    from .export import export_run

    export = job_dir / "export"
    if export.exists():
        shutil.rmtree(export)
    export_run(run_dir, export)
    plan.export = str(export)
    plan.reloaded_as = _reload(export, family)
    plan.seconds = round(time.monotonic() - started, 1)
    atomic.write_text(job_dir / "rehearsal.json", json.dumps(asdict(plan), indent=2, default=str))
    return plan


def gpu_configs(configs_root: Path = REPO / "configs") -> list[Path]:
    """Every recipe config that is not a CPU `tiny`/`small` one (or a variant of one, such as `small_semantic`)."""
    return sorted(
        p
        for p in configs_root.glob("*/*/*.yaml")
        if p.stem.split("_")[0] not in ("tiny", "small") and p.parts[-3] not in ("accelerate", "deepspeed", "llm")
    )
