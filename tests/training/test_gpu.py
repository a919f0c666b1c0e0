"""GPU checks, marked `gpu` (conftest skips them without CUDA; each skips too when its optional package is missing):
packed flash-attn 2 varlen logits equal each document's own, the GREEN recipes in bf16 on the GPU (pretraining with
packed batches, then SFT), and a QLoRA SFT run whose adapter is saved and merged. The unmarked tests run on CPU:
the helpers of the two GPU benchmarks (benchmarks/gpu/sft_throughput.py, benchmarks/gpu/green_vllm_vs_hf.py) and their
CPU paths, so what the GPU runs rely on is checked wherever the tests run."""

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest
from test_green import PRETRAIN, sft_args

from radmetrics.training.common.run_dir import read_eval_results
from radmetrics.training.recipes import load_recipe

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"


def benchmark(name: str):
    """A benchmark script as a module (benchmarks/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def logged_losses(run: Path, step: int = 2) -> list[float]:
    state = json.loads((run / f"checkpoint-{step}" / "trainer_state.json").read_text(encoding="utf-8"))
    return [entry["loss"] for entry in state["log_history"] if "loss" in entry]


@pytest.fixture(scope="module")
def pretrained_bf16(tmp_path_factory):
    """Stage 1 on the GPU in bf16 mixed precision, packed batches, the attention the recipe picks (flash-attn 2 when
    installed). Hidden size 128 gives heads of 32 dimensions, a size flash-attn's kernels are built for."""
    out = tmp_path_factory.mktemp("gpu") / "pretrain"
    run = load_recipe("green/pretrain").main(
        [*PRETRAIN, "--tiny_hidden_size", "128", "--bf16", "true", "--output_dir", str(out)]
    )
    assert math.isfinite(read_eval_results(run)["validation_perplexity"])
    return run / "final"


@pytest.mark.gpu
@pytest.mark.parametrize("flash_kwargs", [False, True], ids=["position-ids", "cu-seq-lens"])
def test_flash_attention_packed_logits_equal_each_document_alone(flash_kwargs):
    """Documents packed into one row (position ids restarting; with `flash_kwargs` also the precomputed cu_seq_lens
    that benchmarks/gpu/sft_throughput.py passes) give, in bf16, the logits each document gets alone."""
    pytest.importorskip("flash_attn")
    import torch
    from transformers import AutoModelForCausalLM, DataCollatorWithFlattening

    from radmetrics.training.tiny import tiny_llama_config

    torch.manual_seed(0)
    config = tiny_llama_config(
        512, 0, 1, 2, hidden_size=128, num_attention_heads=4, num_key_value_heads=2, use_cache=False
    )
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation="flash_attention_2")
    model = model.to("cuda").eval()
    generator = torch.Generator().manual_seed(0)
    documents = [torch.randint(3, 512, (n,), generator=generator).tolist() for n in (17, 64, 5, 33)]
    batch = DataCollatorWithFlattening(return_position_ids=True, return_flash_attn_kwargs=flash_kwargs)(
        [{"input_ids": d} for d in documents]
    )
    batch = {k: v.to("cuda") if torch.is_tensor(v) else v for k, v in batch.items() if k != "labels"}
    with torch.no_grad():
        packed = model(**batch).logits[0].float()
        alone = torch.cat([model(input_ids=torch.tensor([d], device="cuda")).logits[0] for d in documents]).float()
        leaked = model(input_ids=batch["input_ids"]).logits[0].float()  # one causal sequence: documents see each other
    assert packed.shape == alone.shape
    torch.testing.assert_close(packed, alone, atol=5e-2, rtol=0)  # bf16 rounding
    assert (leaked - alone).abs().max() > 0.5  # attention across documents would show far beyond the tolerance


@pytest.mark.gpu
def test_green_sft_in_bf16_on_the_gpu(pretrained_bf16, tmp_path):
    run = load_recipe("green/sft").main(
        sft_args(pretrained_bf16, tmp_path / "sft", "--bf16", "true", "--logging_steps", "1")
    )
    losses = logged_losses(run)
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    assert (run / "final" / ".complete").is_file() and (run / "final" / "model.safetensors").is_file()
    state = json.loads((run / "checkpoint-2" / "trainer_state.json").read_text(encoding="utf-8"))
    assert any("eval_green_parse_rate" in entry for entry in state["log_history"])  # generation on the GPU model
    assert 0 <= read_eval_results(run)["test_parse_rate"] <= 1


@pytest.mark.gpu
def test_qlora_sft_on_the_gpu_saves_and_merges_the_adapter(pretrained_bf16, tmp_path):
    pytest.importorskip("bitsandbytes")
    from transformers import AutoModelForCausalLM

    from radmetrics.training.green.adapters import check_adapter_file

    run = load_recipe("green/sft").main(
        sft_args(
            pretrained_bf16,
            tmp_path / "qlora",
            *(
                "--bf16 true --use_peft true --load_in_4bit true --lora_r 4 --lora_alpha 8 "
                "--generation_eval_samples 0 --logging_steps 1"
            ).split(),
        )
    )
    losses = logged_losses(run)
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    assert check_adapter_file(run / "checkpoint-1", rank=4) > 0
    final = run / "final"
    assert check_adapter_file(final / "adapter", rank=4) > 0 and (final / "model.safetensors").is_file()
    merged = AutoModelForCausalLM.from_pretrained(final)
    assert getattr(merged.config, "quantization_config", None) is None  # merged onto the unquantized base


# CPU: the FLOP count the recipes log (training/common/throughput.py) and benchmarks/gpu/sft_throughput.py


def test_peak_flops_table_reads_the_device_name(monkeypatch):
    monkeypatch.delenv("RADMETRICS_PEAK_TFLOPS", raising=False)
    from radmetrics.training.common import throughput

    expected = {
        "NVIDIA H100 80GB HBM3": 989,
        "NVIDIA H100 PCIe": 756,
        "NVIDIA H100 NVL": 835,
        "NVIDIA H200": 989,
        "NVIDIA H200 NVL": 835,
        "NVIDIA A100-SXM4-80GB": 312,
        "NVIDIA A100 80GB PCIe": 312,
        "NVIDIA L40S": 362,
    }
    assert {name: throughput.peak_tflops(name) for name in expected} == expected
    assert throughput.peak_tflops("Tesla T4") is None


def test_throughput_logger_adds_tokens_per_second_and_mfu_from_the_peak_read_at_train_start(monkeypatch):
    from types import SimpleNamespace

    from transformers import AutoModelForCausalLM

    from radmetrics.training.common import throughput
    from radmetrics.training.tiny import tiny_llama_config

    monkeypatch.setenv("RADMETRICS_PEAK_TFLOPS", "1e-3")  # a peak the tiny model's FLOPs are a visible share of
    monkeypatch.setenv("WORLD_SIZE", "1")
    model = AutoModelForCausalLM.from_config(tiny_llama_config(100, 0, 1, 2))
    logger = throughput.ThroughputLogger(sequence_length=64)
    logger.on_train_begin(None, SimpleNamespace(num_input_tokens_seen=0), None, model=model)
    monkeypatch.setenv("RADMETRICS_PEAK_TFLOPS", "1")  # read once, at train start
    start = logger._last[0]
    monkeypatch.setattr(throughput.time, "perf_counter", lambda: start + 2.0)
    logs = {"loss": 1.0}
    logger.on_log(None, SimpleNamespace(num_input_tokens_seen=1000), None, logs=logs)
    flops = throughput.flops_per_token(throughput.matmul_parameters(model), model.config, 64)
    assert logs["tokens_per_second"] == 500.0
    assert logs["mfu"] == round(flops * 500 / 1e9, 4) > 0.001
    no_loss = {"eval_loss": 1.0}
    logger.on_log(None, SimpleNamespace(num_input_tokens_seen=2000), None, logs=no_loss)
    assert no_loss == {"eval_loss": 1.0}  # evaluation logs get no throughput


def test_model_flops_follow_palm_appendix_b():
    import torch
    from transformers import AutoModelForCausalLM

    from radmetrics.training.common import throughput
    from radmetrics.training.tiny import tiny_llama_config

    config = benchmark("sft_throughput").model_config("phi-2", 0)
    with torch.device("meta"):
        phi = AutoModelForCausalLM.from_config(config)
    n = throughput.matmul_parameters(phi)
    assert sum(p.numel() for p in phi.parameters()) == 2_779_683_840  # phi-2's parameter count: the shape is right
    assert n == 2_779_683_840 - 51200 * 2560  # the input embedding out, the (untied) output projection in
    assert throughput.flops_per_token(n, config, 2048) == 6 * n + 12 * 32 * 2560 * 2048
    assert throughput.document_attention_flops(config, [2048, 100]) == 12 * 32 * 2560 * (2048**2 + 100**2)
    tied = AutoModelForCausalLM.from_config(tiny_llama_config(100, 0, 1, 2))  # tied: the output matmul still counts
    assert throughput.matmul_parameters(tied) == sum(p.numel() for p in tied.parameters())


def test_document_lengths_read_packed_and_padded_batches():
    """What the clock counts: each packed document's length from position ids that restart at every document (TRL's
    padding-free collator), or each padded row's length from its attention mask."""
    import torch
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    sft = benchmark("sft_throughput")
    examples = [{"input_ids": list(range(3, 3 + n))} for n in (5, 4, 9)]
    packed = DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True)(examples)
    assert "attention_mask" not in packed and sft.document_lengths(packed) == [5, 4, 9]
    padded = {"input_ids": torch.ones(2, 6), "attention_mask": torch.tensor([[1] * 6, [1] * 2 + [0] * 4])}
    assert sft.document_lengths(padded) == [6, 2]


def test_sft_throughput_tiny_smoke_run(tmp_path):
    """The tiny shape end to end through the recipe's trainer, the recipe's options against packed rows with fused
    AdamW: on CPU here, on the GPU where there is one."""
    sft = benchmark("sft_throughput")
    out = tmp_path / "result.json"
    argv = "--shape tiny --steps 2 --warmup 1 --seq-len 2048 --peak-tflops 50 --out".split()
    result = sft.main([*argv, str(out), "--set", "packing=true", "per_device_train_batch_size=2"])
    assert json.loads(out.read_text(encoding="utf-8")) == result
    recipe, efficient = result["variants"]["recipe"], result["variants"]["efficient"]
    assert efficient["options"]["packing"] is True and efficient["options"]["optim"] == "adamw_torch_fused"
    assert "packing" not in recipe["options"] and recipe["options"]["optim"] == "adamw_torch"
    for variant in (recipe, efficient):
        assert variant["loss_finite"] and variant["tokens_per_s"] > 0
        assert variant["mfu"] == pytest.approx(variant["achieved_tflops"] / 50, abs=1e-3)
    assert recipe["documents_per_step"] == 8 and efficient["documents_per_step"] > 2  # 2 rows, several conversations
    assert result["peak_source"] == "--peak-tflops" and "liger" in result["checks"]
    import torch

    if torch.cuda.is_available() and importlib.util.find_spec("liger_kernel") is not None:  # Liger knows Llama
        assert result["checks"]["liger"]["ok"], result["checks"]["liger"]
        assert efficient["options"]["use_liger_kernel"] is True
    assert result["command"].startswith("python benchmarks/gpu/sft_throughput.py --shape tiny")


def test_sft_throughput_needs_a_gpu_for_real_shapes():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        benchmark("sft_throughput").main(["--shape", "phi-2"])


# CPU: benchmarks/gpu/green_vllm_vs_hf.py


def test_vllm_benchmark_exits_clearly_without_cuda_or_vllm():
    import torch

    if torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None:
        pytest.skip("CUDA and vllm are both present")
    with pytest.raises(SystemExit, match="needs .*nothing was run"):
        benchmark("green_vllm_vs_hf").main(["--shape", "tiny"])


def test_token_agreement_figures():
    bench = benchmark("green_vllm_vs_hf")
    assert bench.until_eos([5, 6, 2, 7, 2], 2) == [5, 6] and bench.until_eos([5, 6], None) == [5, 6]
    assert bench.agreement([[1, 2, 3], [4, 5], []], [[1, 2, 3], [4, 6, 7], []]) == {
        "identical_share": round(2 / 3, 4),
        "mean_common_prefix_share": round((1 + 1 / 3 + 0) / 3, 4),
    }


def test_batched_left_padded_generation_equals_one_prompt_at_a_time():
    import torch
    from transformers import AutoModelForCausalLM

    from radmetrics.training.tiny import tiny_llama_config

    bench = benchmark("green_vllm_vs_hf")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(tiny_llama_config(300, 0, 1, None, hidden_size=32)).eval()
    generator = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 300, (n,), generator=generator).tolist() for n in (7, 19, 3, 12, 25)]
    batched = bench.hf_generate(model, prompts, 0, None, 3, 6)
    assert batched == [bench.hf_generate(model, [p], 0, None, 1, 6)[0] for p in prompts]
    assert all(len(ids) == 6 for ids in batched)  # no EOS: the whole budget
    eos = batched[0][2]
    assert bench.hf_generate(model, prompts[:1], 0, eos, 1, 6) == [bench.until_eos(batched[0], eos)]


@pytest.mark.parametrize("kind", ["released", "random"])
def test_vllm_benchmark_runs_end_to_end_with_vllm_stubbed(kind, tmp_path, monkeypatch):
    """The whole script on CPU with a stand-in for vLLM that returns HF's responses, the first one changed: the
    HF model is dropped before vLLM starts, vLLM gets a saved model folder, and the figures count the change."""
    import torch
    from parity import lookalikes

    bench = benchmark("green_vllm_vs_hf")
    hf_outputs, seen = [], {}
    run_hf = bench.run_hf

    def spy_hf(*args):
        outputs, seconds = run_hf(*args)
        hf_outputs.extend(outputs)
        return outputs, seconds

    def stub_vllm(setup, dtype, max_new_tokens, memory_fraction, trust_remote_code):
        seen.update(model=setup.model, files={p.name for p in setup.directory.iterdir()}, dtype=dtype)
        return [hf_outputs[0] + [5], *hf_outputs[1:]], 0.5

    monkeypatch.setattr(bench, "require_gpu_and_vllm", lambda: None)
    monkeypatch.setattr(bench, "run_hf", spy_hf)
    monkeypatch.setattr(bench, "run_vllm", stub_vllm)
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as when the script runs: its sibling scripts import
    if kind == "released":
        lookalikes.build_green(tmp_path)
        source = ["--model", str(lookalikes.snapshot(tmp_path, lookalikes.GREEN_REPOS[0]))]
    else:
        source = ["--shape", "tiny"]
    out = tmp_path / "result.json"
    result = bench.main([*source, *"--pairs 4 --max-new-tokens 5 --batch-size 3 --out".split(), str(out)])
    assert seen["model"] is None and "config.json" in seen["files"] and "model.safetensors" in seen["files"]
    dtype = {"released": "float16", "random": "bfloat16"}[kind] if torch.cuda.is_available() else "float32"
    assert seen["dtype"] == result["dtype"] == dtype and result["stops_at_eos"] == (kind == "released")
    assert result["identical_share"] == 0.75 and result["vllm"]["seconds"] == 0.5 and result["hf"]["reports_per_s"] > 0
    assert 0 <= result["same_green_score_share"] <= 1 and json.loads(out.read_text(encoding="utf-8")) == result
