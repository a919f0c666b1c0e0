"""GREEN SFT training throughput (tokens/s) and model FLOPs utilisation (MFU) on one GPU, through the SFT recipe's
own trainer, for the recipe's options and for faster ones, in one run.

    python benchmarks/gpu/sft_throughput.py --shape phi-2                          # variants recipe, efficient
    python benchmarks/gpu/sft_throughput.py --shape phi-2 --variants recipe efficient compiled
    python benchmarks/gpu/sft_throughput.py --shape llama-2-7b --weights bf16 --variants efficient
    python benchmarks/gpu/sft_throughput.py --shape tiny --steps 3                 # CPU smoke run, seconds

What runs: configs/green/sft/<shape>.yaml's training options (packing, optimiser, activation checkpointing, bf16
mixed precision, rows a step; DeepSpeed, evaluation, saving and logging left out), built by the recipe's
`build_sft_trainer` (training/green/sft.py) on random weights of the shape (`causal_lm.model_from_config`): TRL's
collator (BFD packing makes padding-free rows whose position ids restart at every document, so no document attends
to another), the Trainer's optimiser, Liger kernels and torch.compile as the options ask. The data are GREEN SFT
conversations: programmatic-teacher pairs of the bundled IU reports in the recipe's chat format, tokenised with a BPE
trained on them. Each variant is the recipe's options with overrides:
  recipe     the config as it is
  efficient  fused AdamW (optim adamw_torch_fused), and Liger kernels (use_liger_kernel) when liger-kernel is installed
             on a GPU and passes its check: the loss on a fixed batch equal to the recipe's (bf16 tolerance)
  compiled   efficient + torch_compile (the first steps compile: give it --warmup 5 or more)
`--set KEY=VALUE` adds an override to every variant but `recipe` (e.g. per_device_train_batch_size=8 for larger
micro-batches). `--weights bf16` keeps parameters, gradients and AdamW states in bf16 instead of bf16 autocast over
fp32 weights: a 7B model's fp32 master weights and Adam states (16 bytes a parameter) do not fit on one 80 GB GPU.
Timing: trainer.train for --warmup + --steps optimiser steps; the clock runs from the first timed step to the last
one's end, between CUDA synchronisations; tokens are those of the timed steps' batches.

MFU = model FLOPs per second / the GPU's dense bf16 peak. Model FLOPs per token = 6 N + 12 L H Q T (PaLM,
Chowdhery et al. 2022, appendix B; torchtitan's get_num_flop_per_token): N the parameters except the input
embedding table (the output projection multiplies every token, so it counts, tied or not), L layers, H query
heads of Q dimensions, T = --seq-len. By that convention attention is counted as if non-causal and activation
recomputation is not counted (checkpointing lowers MFU). `mfu_document_attention` counts attention over each
packed document's own length instead (12 L H Q sum(l^2) a step), the attention that packing computes.
Peak: radmetrics.training.common.throughput's table from torch.cuda.get_device_name (NVIDIA datasheets, dense = half
the sparsity figure; the same values as torchtitan's table), or --peak-tflops. Goals: 35% MFU for the
phi-2 shape; the long-term goal is 45%.
Writes benchmarks/results/sft_throughput_<shape>.json (or --out) with the device, command and figures.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

# before torch is imported: less fragmentation near the memory limit
os.environ.setdefault("PYTORCH_ALLOC_CONF", "expandable_segments:True")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the shared helper `common`
from common import decoder_shape, device_name  # noqa: E402

from radmetrics.training.common import throughput  # noqa: E402

MFU_GOAL = 0.45
MFU_TARGET = 0.35  # the target for the phi-2 shape on one H100 or H200

PHI_2_ROTARY_AND_MLP = dict(partial_rotary_factor=0.4, rope_theta=10000.0, hidden_act="gelu_new", resid_pdrop=0.1)
MISTRAL_7B_ATTENTION = dict(rope_theta=10000.0, sliding_window=4096, rms_norm_eps=1e-5)
# (transformers config class, sizes as in the released model's config.json)
SHAPES = {
    "tiny": ("LlamaConfig", decoder_shape(128, 256, 2, 4, 2, max_position_embeddings=4096)),
    "phi-2": (
        "PhiConfig",
        decoder_shape(2560, 10240, 32, 32, 32, vocab_size=51200, max_position_embeddings=2048, **PHI_2_ROTARY_AND_MLP),
    ),
    "llama-2-7b": (
        "LlamaConfig",
        decoder_shape(4096, 11008, 32, 32, 32, vocab_size=32000, max_position_embeddings=4096, rms_norm_eps=1e-5),
    ),
    "mistral-7b": (
        "MistralConfig",
        decoder_shape(4096, 14336, 32, 32, 8, vocab_size=32000, max_position_embeddings=32768, **MISTRAL_7B_ATTENTION),
    ),
}
# The recipe options a single-GPU timing keeps from the shape's config; the rest (DeepSpeed, evaluation, saving,
# logging, schedules) does not change what a training step computes.
STEP_OPTIONS = (
    "packing",
    "packing_strategy",
    "padding_free",
    "optim",
    "activation_checkpointing",
    "per_device_train_batch_size",
    "bf16",
    "adam_beta2",
    "weight_decay",
    "use_liger_kernel",
    "torch_compile",
)
VARIANTS = {
    "recipe": {},
    "efficient": {"optim": "adamw_torch_fused", "use_liger_kernel": True},
    "compiled": {"optim": "adamw_torch_fused", "use_liger_kernel": True, "torch_compile": True},
}
MEAN_DOCUMENT_TOKENS = 800  # about what the GREEN conversations measure with this tokeniser
# relative, bf16 autocast, fused kernels against unfused ones: the loss (random weights put it near ln V whatever the
# hidden states, so the logits are compared too)
LIGER_LOSS_TOLERANCE = 2e-2
LIGER_LOGITS_TOLERANCE = 2e-2


def recipe_options(shape: str) -> dict:
    import yaml

    config = yaml.safe_load((ROOT / "configs" / "green" / "sft" / f"{shape}.yaml").read_text(encoding="utf-8"))
    return {key: config[key] for key in STEP_OPTIONS if key in config}


def model_config(shape: str, tokenizer_vocab: int):
    import transformers

    class_name, sizes = SHAPES[shape]
    vocab = {"vocab_size": tokenizer_vocab} if shape == "tiny" else {}
    return getattr(transformers, class_name)(**sizes, **vocab, use_cache=False)


def green_conversations_for(workdir: Path, tokens: int, max_length: int):
    """(GREEN SFT conversations of about `tokens` tokens as the recipe builds them, the tokenizer): programmatic
    teacher pairs of the bundled IU reports, a tiny BPE trained on the reports."""
    from datasets import Dataset, DatasetDict

    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.data_builders.pairs.programmatic_teacher import programmatic_annotation
    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_tokenizer
    from radmetrics.training.green.sft import GreenDataArguments, green_conversations

    reports = iu_xray_corpus()
    heuristics = ("random", "remove_shuffle", "recombine")
    per_heuristic = tokens // (MEAN_DOCUMENT_TOKENS * len(heuristics)) + 1
    pairs = build_pairs(reports, assign_splits(reports), heuristics, per_heuristic, progress=False)
    records = [programmatic_annotation(pair) for pair in pairs]
    tokenizer = build_causal_tokenizer(CausalLMArguments(tiny_vocab_size=4000), [r.text for r in reports], workdir)
    data = DatasetDict({"train": Dataset.from_list(records)})
    options = argparse.Namespace(max_length=max_length, dataset_num_proc=None)
    conversations, _ = green_conversations(data, tokenizer, GreenDataArguments(), options)
    return conversations, tokenizer


def sft_config(options: dict, args, output_dir: str, device: str):
    from trl import SFTConfig

    options = dict(options)
    if args.weights == "bf16" or device == "cpu":
        options["bf16"] = False  # bf16 weights need no autocast; the CPU smoke run stays in fp32
    return SFTConfig(
        output_dir=output_dir,
        max_length=args.seq_len,
        max_steps=args.warmup + args.steps,
        learning_rate=1e-5,
        lr_scheduler_type="constant",
        gradient_accumulation_steps=1,
        eval_strategy="no",
        save_strategy="no",
        logging_steps=10**6,
        report_to="none",
        disable_tqdm=True,
        use_cpu=device == "cpu",
        seed=0,
        **options,
    )


class StepClock:
    """Times optimiser steps warmup+1 ... warmup+steps and records each timed micro-batch's document lengths (from
    the position ids that restart at every packed document, or the attention mask of padded rows)."""

    def __init__(self, trainer, warmup: int, total: int, device: str):
        from transformers import TrainerCallback

        clock = self
        self.start = self.end = None
        self._masks: list[dict] = []  # read after the clock stops: reading them inside would wait for the GPU

        class Callback(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                if state.global_step == warmup:
                    synchronize(device)
                    clock.start = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                if state.global_step == total:
                    synchronize(device)
                    clock.end = time.perf_counter()

        trainer.add_callback(Callback())
        compute_loss = trainer.compute_loss

        def counted(model, inputs, *rest, **options):
            if trainer.state.global_step >= warmup and model.training:
                self._masks.append({k: inputs[k] for k in ("position_ids", "attention_mask") if k in inputs})
            return compute_loss(model, inputs, *rest, **options)

        trainer.compute_loss = counted

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def batches(self) -> list[list[int]]:
        """Each timed micro-batch's document lengths."""
        return [document_lengths(masks) for masks in self._masks]


def document_lengths(inputs) -> list[int]:
    if "attention_mask" not in inputs and "position_ids" in inputs:
        lengths = []
        for row in inputs["position_ids"].tolist():
            starts = [i for i, p in enumerate(row) if p == 0] + [len(row)]
            lengths += [b - a for a, b in zip(starts, starts[1:])]
        return lengths
    return inputs["attention_mask"].sum(dim=1).tolist()


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def build_variant_trainer(args, name, overrides, conversations, tokenizer, workdir, device):
    """(trainer, model config) for one variant: fresh random weights (seed 0), the recipe's trainer."""
    import torch

    from radmetrics.training.green.causal_lm import attention_implementation, model_from_config
    from radmetrics.training.green.sft import build_sft_trainer

    config = model_config(args.shape, len(tokenizer))
    torch.manual_seed(0)
    dtype = torch.bfloat16 if args.weights == "bf16" else torch.float32
    model = model_from_config(config, attention_implementation(args.attention), dtype, device)
    training_args = sft_config({**recipe_options(args.shape), **overrides}, args, str(workdir / name), device)
    return build_sft_trainer(model, tokenizer, training_args, conversations), config


def fixed_batch_outputs(trainer, batch) -> tuple[float, object]:
    """(TRL's loss, the logits) of `batch` in eval mode, under the bf16 autocast training uses (transformers 5's
    Trainer leaves autocast to accelerate's wrapper, which only `train()` installs)."""
    import contextlib

    import torch

    model = trainer.model.eval()
    autocast = torch.autocast("cuda", torch.bfloat16) if trainer.args.bf16 else contextlib.nullcontext()
    with torch.no_grad(), autocast:
        loss = float(trainer.compute_loss(model, batch))
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits.float()
    model.train()
    return loss, logits


def liger_check(args) -> dict:
    """Liger's kernels (Triton: GPU only), applied as the trainer applies them (TRL's kernel config), must leave the
    loss and the logits of a fixed batch as the recipe's model computes them. Run in a process of its own
    (`--liger-check`): Liger patches transformers' modules, not only the model, so the variants timed after it in
    this process would carry its kernels whatever their options."""
    import subprocess

    if args.device != "cuda":
        return {"ok": False, "reason": "Liger's Triton kernels need a CUDA GPU"}
    if importlib.util.find_spec("liger_kernel") is None:
        return {"ok": False, "reason": "liger-kernel is not installed"}
    command = [sys.executable, __file__, "--shape", args.shape, "--seq-len", str(args.seq_len), "--weights"]
    command += [args.weights, "--attention", args.attention, "--liger-check"]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"ok": False, "reason": f"the check exited {done.returncode}: {done.stderr.strip()[-500:]}"}
    return json.loads(lines[-1])


def run_liger_check(args, conversations, tokenizer, workdir) -> dict:
    """The check itself, in its own process."""
    from liger_kernel.transformers.monkey_patch import MODEL_TYPE_TO_APPLY_LIGER_FN
    from transformers.integrations.liger import apply_liger_kernel

    model_type = model_config(args.shape, len(tokenizer)).model_type
    if model_type not in MODEL_TYPE_TO_APPLY_LIGER_FN:
        return {"ok": False, "reason": f"Liger has no kernels for model type {model_type!r}"}
    overrides = {"use_liger_kernel": True}
    trainer, _ = build_variant_trainer(args, "liger_check", overrides, conversations, tokenizer, workdir, "cuda")
    batch = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    plain_loss, plain_logits = fixed_batch_outputs(trainer, batch)
    kernel_config = trainer.args.liger_kernel_config  # TRL's: its own loss, so no fused linear cross-entropy
    apply_liger_kernel(trainer.model, kernel_config)
    liger_loss, liger_logits = fixed_batch_outputs(trainer, batch)
    logits_difference = float((liger_logits - plain_logits).norm() / plain_logits.norm())
    ok = abs(liger_loss - plain_loss) <= LIGER_LOSS_TOLERANCE * abs(plain_loss)
    ok = ok and logits_difference <= LIGER_LOGITS_TOLERANCE
    return {
        "ok": ok,
        "kernel_config": kernel_config,
        "loss_without": round(plain_loss, 5),
        "loss_with": round(liger_loss, 5),
        "logits_relative_difference": round(logits_difference, 5),
        "tolerances": {"loss": LIGER_LOSS_TOLERANCE, "logits": LIGER_LOGITS_TOLERANCE},
    }


def release(trainer) -> None:
    """Free a variant's model, optimiser states and gradients before the next variant is built: the trainer sits in
    reference cycles (the counting wrapper, TRL's patched forward), so dropping the name would not free them."""
    import torch

    trainer.__dict__.pop("compute_loss", None)
    trainer.accelerator.free_memory()
    trainer.model = trainer.model_wrapped = trainer.optimizer = trainer.lr_scheduler = None
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def time_variant(args, name, overrides, conversations, tokenizer, workdir, device) -> dict:
    import torch

    trainer, config = build_variant_trainer(args, name, overrides, conversations, tokenizer, workdir, device)
    clock = StepClock(trainer, args.warmup, args.warmup + args.steps, device)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    try:
        output = trainer.train()
        result = summarise(args, trainer.model, config, clock, device, overrides, output.training_loss)
    except torch.OutOfMemoryError:
        result = {"options": overrides, "error": "out of GPU memory"}
    release(trainer)
    return result


def summarise(args, model, config, clock: StepClock, device: str, overrides: dict, training_loss: float) -> dict:
    import torch

    tokens = sum(sum(lengths) for lengths in clock.batches)
    n_params = throughput.matmul_parameters(model)
    model_flops = throughput.flops_per_token(n_params, config, args.seq_len) * tokens
    document_flops = 6 * n_params * tokens + sum(
        throughput.document_attention_flops(config, lengths) for lengths in clock.batches
    )
    peak = args.peak_tflops or (throughput.peak_tflops(device_name()) if device == "cuda" else None)

    def mfu(flops: float) -> float | None:
        return round(flops / clock.seconds / (peak * 1e12), 4) if peak else None

    return {
        "options": {**recipe_options(args.shape), **overrides},
        "attention": model.config._attn_implementation,
        "parameters": sum(p.numel() for p in model.parameters()),
        "matmul_parameters": n_params,
        "tokens_per_step": round(tokens / args.steps, 1),
        "documents_per_step": round(sum(len(lengths) for lengths in clock.batches) / args.steps, 2),
        "seconds": round(clock.seconds, 3),
        "tokens_per_s": round(tokens / clock.seconds, 1),
        "model_flops_per_token": throughput.flops_per_token(n_params, config, args.seq_len),
        "achieved_tflops": round(model_flops / clock.seconds / 1e12, 2),
        "mfu": mfu(model_flops),
        "mfu_document_attention": mfu(document_flops),
        "training_loss": round(training_loss, 4),
        "loss_finite": bool(torch.isfinite(torch.tensor(training_loss))),
        "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None,
    }


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="phi-2", choices=list(SHAPES))
    parser.add_argument("--variants", nargs="+", default=["recipe", "efficient"], choices=list(VARIANTS))
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="KEY=VALUE", help="overrides of every variant but recipe"
    )
    parser.add_argument("--weights", choices=["amp", "bf16"], default="amp", help="amp: bf16 autocast, fp32 weights")
    parser.add_argument("--seq-len", type=int, default=2048, help="tokens per packed row (the recipe's max_length)")
    parser.add_argument("--steps", type=int, default=10, help="timed optimiser steps")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--attention", default="auto", help="auto (flash_attention_2 when installed, else sdpa)")
    parser.add_argument("--peak-tflops", type=float, help="the GPU's dense bf16 peak (default: from the device name)")
    parser.add_argument(
        "--out", type=Path, help="result JSON (default benchmarks/results/sft_throughput_<shape>.json)"
    )
    parser.add_argument("--liger-check", action="store_true", help="only Liger's check, printed as JSON (a GPU)")
    return parser.parse_args(argv)


def parse_overrides(pairs: list[str]) -> dict:
    import yaml

    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            sys.exit(f"sft_throughput: --set takes KEY=VALUE, got {pair!r}")
        overrides[key] = yaml.safe_load(value)
    return overrides


def main(argv=None) -> dict:
    import torch

    args = parse_args(argv)
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = args.device
    if device == "cpu" and args.shape != "tiny":
        sys.exit(
            f"sft_throughput: --shape {args.shape} needs a CUDA GPU; without one only --shape tiny runs (a smoke test)"
        )
    extra = parse_overrides(args.set)
    # enough conversations for every step of the variant with the most rows a step, whether it packs them or not
    rows = max(options.get("per_device_train_batch_size", 1) for options in (recipe_options(args.shape), extra))
    variants = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.liger_check:
            conversations, tokenizer = green_conversations_for(workdir, rows * args.seq_len, args.seq_len)
            check = run_liger_check(args, conversations, tokenizer, workdir)
            print(json.dumps(check))
            return check
        wanted = any(dict(VARIANTS[name], **extra).get("use_liger_kernel") for name in args.variants)
        checks = {"liger": liger_check(args)} if wanted else {}  # its own process, before any variant's model
        tokens = (args.warmup + args.steps) * rows * args.seq_len
        conversations, tokenizer = green_conversations_for(workdir, tokens, args.seq_len)
        for name in args.variants:
            overrides = dict(VARIANTS[name], **(extra if name != "recipe" else {}))
            if overrides.get("use_liger_kernel") and not checks["liger"]["ok"]:
                overrides["use_liger_kernel"] = False  # timed without it; the check says why
            variants[name] = time_variant(args, name, overrides, conversations, tokenizer, workdir, device)
    command = ["python", "benchmarks/gpu/sft_throughput.py", *(sys.argv[1:] if argv is None else argv)]
    name = device_name()
    peak = args.peak_tflops or (throughput.peak_tflops(name) if device == "cuda" else None)
    best = max((v.get("mfu") or 0 for v in variants.values()), default=0)
    result = {
        "shape": args.shape,
        "device": name,
        "command": shlex.join(command),
        "versions": versions("torch", "transformers", "trl", "liger-kernel", "flash-attn"),
        "weights": "bf16 (parameters, gradients, AdamW states)" if args.weights == "bf16" else "fp32, bf16 autocast",
        "seq_len": args.seq_len,
        "warmup_steps": args.warmup,
        "steps": args.steps,
        "flops_formula": "6*N + 12*L*H*Q*T per token (PaLM appendix B); N excludes the input embedding only",
        "peak_tflops": peak,
        "peak_source": "--peak-tflops" if args.peak_tflops else ("device-name table" if peak else None),
        "checks": checks,
        "variants": variants,
        "mfu_target": MFU_TARGET,
        "mfu_target_met": bool(peak) and best >= MFU_TARGET,
        "mfu_goal": MFU_GOAL,
    }
    out = args.out or ROOT / "benchmarks" / "results" / f"sft_throughput_{args.shape}.json"
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


def versions(*packages: str) -> dict:
    import importlib.metadata as metadata

    found = {}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


if __name__ == "__main__":
    main()
