"""Multi-process training on CPU: DeepSpeed ZeRO-3 over gloo, 2 processes (slow: ~1-2 min incl. DeepSpeed's JIT
build)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# accelerate's launcher with two real CPU processes (its --cpu flag would quietly run one), then `-m MODULE ...`
TWO_CPU_PROCESSES = [
    str(Path(sys.executable).with_name("accelerate")),
    *("launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1"),
    *("--mixed_precision", "no", "--dynamo_backend", "no", "-m"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["radmetrics.training.rate_ner.iob", "radmetrics.training.rate_ner.span", "radmetrics.training.chexbert.finetune"],
)
def test_zero3_two_cpu_processes(module, tmp_path):
    command = [
        *TWO_CPU_PROCESSES,
        module,
        "--model_name_or_path",
        "tiny-bert",
        "--deepspeed",
        str(REPO / "configs" / "deepspeed" / "zero3.json"),
        "--output_dir",
        str(tmp_path / "run"),
        *(
            "--max_steps 4 --save_strategy steps --save_steps 2 --max_train_samples 256 "
            "--max_eval_samples 64 --max_seq_length 48 --per_device_train_batch_size 8 --learning_rate "
            "0.001 --eval_strategy no --report_to none"
        ).split(),
    ]
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = tmp_path / "run"
    assert (run / "checkpoint-4" / ".complete").is_file() and (run / "final" / ".complete").is_file()
    assert any(
        p.name.startswith("global_step") for p in (run / "checkpoint-4").iterdir()
    )  # a DeepSpeed (ZeRO) checkpoint
    assert json.loads((run / "eval_results.json").read_text())


@pytest.mark.slow
def test_green_sft_step_under_zero3_two_cpu_processes(tmp_path):
    """One GREEN SFT step under DeepSpeed ZeRO-3 on 2 CPU processes, from a tiny stage-1 model."""
    from radmetrics.training.recipes import load_recipe

    pretrained = (
        load_recipe("green/pretrain").main(
            [
                *(
                    "--model_name_or_path tiny-llama --tiny_hidden_size 32 --tiny_vocab_size 600 "
                    "--max_length 64 --max_train_samples 100 --max_eval_samples 8 --max_steps 1 "
                    "--save_strategy no --report_to none --output_dir"
                ).split(),
                str(tmp_path / "pretrain"),
            ]
        )
        / "final"
    )
    command = [
        *TWO_CPU_PROCESSES,
        "radmetrics.training.green.sft",
        "--config",
        str(REPO / "configs/green/sft/tiny.yaml"),
        "--model_name_or_path",
        str(pretrained),
        "--deepspeed",
        str(REPO / "configs/deepspeed/zero3.json"),
        "--output_dir",
        str(tmp_path / "sft"),
        *(
            "--heuristics remove_shuffle --per_heuristic 40 --max_train_samples 16 --max_eval_samples 4 "
            "--generation_eval_samples 0 --max_new_tokens 8 --max_steps 1 --per_device_train_batch_size 2 "
            "--eval_strategy no --save_strategy steps --save_steps 1"
        ).split(),
    ]
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = tmp_path / "sft"
    assert (run / "checkpoint-1" / ".complete").is_file() and (run / "final" / ".complete").is_file()
    assert "on 2 process(es) with DeepSpeed" in done.stdout
    assert "test_parse_rate" in json.loads((run / "eval_results.json").read_text())
