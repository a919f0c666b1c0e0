"""What a 2-node x 8-GPU run depends on, checked on CPU: the GPU configs' settings, the save-and-stop on the
launcher's request, each process's own GPU, DeepSpeed's offload optimizer, the tokenizers the base configs load,
QLoRA's shardable storage, and builders keyed on the global rank. (The launcher itself: test_slurm.py; every GPU config
run end to end: test_rehearsal.py, slow.)"""

import json
from pathlib import Path

import pytest
import yaml

from radmetrics.training.common.run_dir import complete_checkpoints, is_complete
from radmetrics.training.rehearsal import gpu_configs

ROOT = Path(__file__).resolve().parents[2]
GPU_CONFIGS = {p.relative_to(ROOT).as_posix(): yaml.safe_load(p.read_text()) for p in gpu_configs()}
GREEN = {name: c for name, c in GPU_CONFIGS.items() if name.startswith("configs/green/")}


def test_there_are_thirteen_gpu_configs():
    assert len(GPU_CONFIGS) == 13 and len(GREEN) == 7


def test_the_crimson_config_has_its_authors_settings():
    """The authors' finetune.sbatch and finetune_medgemma.py settings (docs/training-crimson.md)."""
    config = GPU_CONFIGS["configs/crimson/sft/medgemma-4b-lora.yaml"]
    authors = {
        "model_name_or_path": "google/medgemma-4b-it",
        "learning_rate": 1.0e-4,
        "lr_scheduler_type": "cosine",
        "warmup_steps": 0.05,
        "weight_decay": 0.05,
        "num_train_epochs": 10,
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 2,
        "max_length": 4048,
        "lora_r": 16,
        "lora_alpha": 32,
        "lora_dropout": 0.05,
        "lora_target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        "seed": 42,
        "max_train_samples": 75000,
        "bf16": True,
        "use_peft": True,
    }
    assert {key: config[key] for key in authors} == authors


@pytest.mark.parametrize("name", sorted(GREEN))
def test_green_gpu_configs_fail_loudly_without_flash_attention_and_cap_the_final_evaluation(name):
    config = GREEN[name]
    assert config["attn_implementation"] == "flash_attention_2"
    assert 0 < config["final_eval_samples"] <= 5000


@pytest.mark.parametrize("name", sorted(GPU_CONFIGS))
def test_gpu_configs_give_the_final_evaluation_time_inside_the_process_group(name):
    assert (
        GPU_CONFIGS[name]["ddp_timeout"] >= 3600
    )  # the default (1800 s) is shorter than a 7B model's final evaluation


def test_sft_learning_rates_follow_greens_training_script_and_lora_has_its_own():
    for name, config in GREEN.items():
        if "/sft/" not in name:
            continue
        assert config["packing"] is True and config["packing_strategy"] == "bfd"  # padding-free packed batches
        assert (
            config["deepspeed"] == "configs/deepspeed/zero3.json"
        )  # no CPU offload: a 7B model fits ZeRO-3 on 8 GPUs
        if config.get("use_peft"):
            assert config["learning_rate"] == 1e-4
        else:  # Stanford-AIMI/GREEN training/finetune.sh: lr 1e-5, adam_beta2 0.95, weight decay 0.1, warm-up 0.05
            assert (config["learning_rate"], config["adam_beta2"], config["weight_decay"], config["warmup_steps"]) == (
                1e-5,
                0.95,
                0.1,
                0.05,
            )


def test_pretraining_batches_by_a_token_budget():
    for name, config in GREEN.items():
        if "/pretrain/" in name:
            assert config["pack_tokens"] >= 8192 and config["per_device_train_batch_size"] == 1
            assert config["preprocessing_num_workers"] > 1


def test_offload_config_gives_deepspeed_an_optimizer_it_accepts():
    """ZeRO-Offload refuses a client (torch) optimizer unless zero_force_ds_cpu_optimizer is false; with an
    "optimizer" block DeepSpeed builds its own CPU Adam instead (the rehearsal runs it: test_rehearsal.py)."""
    config = json.loads((ROOT / "configs/deepspeed/zero3_offload.json").read_text())
    assert config["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert "optimizer" in config or config.get("zero_force_ds_cpu_optimizer") is False


def test_span_recipes_refuse_a_deepspeed_optimizer_that_would_drop_their_head_learning_rate():
    from radmetrics.training.span.trainer import refuse_deepspeed_optimizer

    refuse_deepspeed_optimizer(str(ROOT / "configs/deepspeed/zero3.json"))
    with pytest.raises(ValueError, match="optimizer"):
        refuse_deepspeed_optimizer(str(ROOT / "configs/deepspeed/zero3_offload.json"))


def test_each_process_generates_on_its_own_gpu(monkeypatch):
    import torch

    from radmetrics.inference.loading.hub import inference_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert inference_device() == "cuda:3"  # not "cuda" (GPU 0) in all eight processes
    monkeypatch.delenv("LOCAL_RANK")
    assert inference_device() == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert inference_device() == "cpu"


def test_qlora_stores_quantised_weights_in_a_dtype_zero3_can_shard():
    import torch

    from radmetrics.training.common.sft import qlora_quantization

    config = qlora_quantization()
    assert config.load_in_4bit and config.bnb_4bit_quant_type == "nf4"
    assert config.bnb_4bit_quant_storage == torch.bfloat16


def test_deberta_v3_tokenizer_shipped_as_spm_model_only_loads(tmp_path, iu_reports):
    """microsoft/deberta-v3-base ships spm.model and no tokenizer.json: transformers 5 converts it only with
    sentencepiece installed (a core dependency)."""
    from radmetrics.inference.loading.hub import load_tokenizer
    from radmetrics.training.lookalike import build_lookalike

    model = build_lookalike(
        "microsoft/deberta-v3-base",
        [r.text for r in iu_reports[:1500] if r.text],
        tmp_path / "deberta",
        vocab_size=600,
    )
    assert {p.name for p in model.iterdir()} >= {"spm.model", "tokenizer_config.json"} and not (
        model / "tokenizer.json"
    ).exists()
    tokenizer = load_tokenizer(model)
    assert (
        len(tokenizer) >= 600 and tokenizer.convert_ids_to_tokens(tokenizer("No effusion.")["input_ids"])[0] == "[CLS]"
    )


def test_a_run_saves_and_stops_when_the_launcher_asks_then_resumes_from_that_checkpoint(
    tmp_path, iu_reports, monkeypatch, capsys
):
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.silver.dataset import write_silver
    from radmetrics.training.rate_ner import iob

    reports = [r for r in iu_reports if r.text][:400]
    write_silver(reports, assign_splits(reports), tmp_path / "silver", labelers=["rate_ner"], progress=False)
    args = [
        "--config",
        str(ROOT / "configs/rate_ner/iob/tiny.yaml"),
        "--silver_dir",
        str(tmp_path / "silver"),
        "--output_dir",
        str(tmp_path / "run"),
        *"--max_steps 6 --save_steps 100 --eval_strategy no --max_eval_samples 20".split(),
    ]
    marker = tmp_path / "requeue-marker"
    marker.touch()  # the launcher got USR1 before the first step ended
    monkeypatch.setenv("RADMETRICS_REQUEUE_MARKER", str(marker))
    run = iob.main(args)
    assert [p.name for p in complete_checkpoints(run)] == ["checkpoint-1"]  # saved off-schedule, then stopped
    assert not (run / "final").exists() and "stopped as the launcher asked" in capsys.readouterr().out
    marker.unlink()  # the requeued job's launcher removes it
    iob.main(args)
    out = capsys.readouterr().out
    assert "resuming from" in out and "checkpoint-1" in out
    assert is_complete(run / "final")
    state = json.loads((run / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6


def test_builders_run_once_on_global_rank_zero_and_other_ranks_wait(tmp_path, monkeypatch):
    import threading
    import time

    from radmetrics.training.common.distributed import build_once

    marker = tmp_path / "built"
    calls = []
    monkeypatch.setenv("RANK", "8")  # local rank 0 of the second node: must not build
    waiter = threading.Thread(
        target=build_once, args=(marker, lambda: calls.append("node 2")), kwargs={"timeout_s": 30}
    )
    waiter.start()
    time.sleep(1)  # the waiter has read its rank and is polling for the marker
    assert calls == [] and not marker.exists()
    monkeypatch.setenv("RANK", "0")
    build_once(marker, lambda: calls.append("rank 0"))
    waiter.join()
    assert calls == ["rank 0"] and is_complete(marker)


def test_rehearsal_finds_each_configs_architecture_and_changes_only_what_a_cpu_cannot_run():
    from radmetrics.training.lookalike import family_of
    from radmetrics.training.rehearsal import base_model_of, rehearsal_overrides

    families = {name: family_of(base_model_of(config, ROOT / "configs")) for name, config in GPU_CONFIGS.items()}
    assert families["configs/green/sft/mistral-7b.yaml"] == "mistral"  # through stage 1's output_dir
    assert families["configs/green/sft/llama-2-7b-lora.yaml"] == "llama"
    assert (
        families["configs/rate_ner/span/base.yaml"] == "deberta-v2"
        and families["configs/chexbert/finetune/base.yaml"] == "bert"
    )
    phi2 = GREEN["configs/green/sft/phi-2.yaml"]
    flags = rehearsal_overrides("green/sft", phi2, Path("/m"), Path("/o"), phi2["deepspeed"])
    changed = dict(zip(flags[::2], flags[1::2]))
    assert "--use_cpu" not in changed  # DeepSpeed's ranks share one world through DS_ACCELERATOR=cpu
    judge = GPU_CONFIGS["configs/judge/pairs/base.yaml"]
    ddp = dict(zip(*[iter(rehearsal_overrides("judge/pairs", judge, Path("/m"), Path("/o")))] * 2))
    assert ddp["--use_cpu"] == "true"  # without it each DDP rank would train alone on a CPU
    assert (
        changed["--attn_implementation"] == "sdpa"
        and changed["--bf16"] == "false"
        and changed["--model_name_or_path"] == "/m"
    )
    assert not {"--learning_rate", "--deepspeed", "--packing", "--max_length", "--adam_beta2"} & set(changed)


def test_final_green_evaluation_is_shared_out_over_the_ranks(monkeypatch):
    """Each rank generates for every world-size-th pair only, and every rank gets all responses back in order
    (a 7B model generating the whole test split on rank 0 kept 15 ranks waiting past the process-group timeout)."""
    from datasets import Dataset

    from radmetrics.training.common import distributed
    from radmetrics.training.green import evaluation

    records = Dataset.from_list([{"reference": f"r{i}", "candidate": f"c{i}", "response": "x"} for i in range(7)])
    generated = []

    def fake_generate(model, tokenizer, mine, *args):
        generated.extend(mine["reference"])
        return [f"answer to {r}" for r in mine["reference"]]

    other_rank = [(i, f"answer to r{i}") for i in range(0, 7, 2)]
    monkeypatch.setattr(evaluation, "_generate", fake_generate)
    monkeypatch.setattr(distributed, "rank_and_world", lambda: (1, 2))
    monkeypatch.setattr(distributed, "gather_to_all", lambda items: sorted(other_rank + list(items)))
    seen = {}
    monkeypatch.setattr(
        evaluation, "agreement_from_responses", lambda responses, *a, **k: seen.setdefault("r", responses)
    )
    evaluation.green_agreement(None, None, records, (0.0, 0.0), across_ranks=True)
    assert generated == ["r1", "r3", "r5"]
    assert seen["r"] == [f"answer to r{i}" for i in range(7)]


def test_qlora_and_flash_attention_come_with_the_gpu_extra():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("bitsandbytes") for d in extras["gpu"]) and any(
        d.startswith("flash-attn") for d in extras["gpu"]
    )
