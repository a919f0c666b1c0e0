"""Training throughput: tokens per second and model FLOPs utilisation (MFU), in the training logs and the benchmarks.

Model FLOPs per token = 6 N + 12 L H Q T (PaLM, Chowdhery et al. 2022, appendix B; torchtitan's
get_num_flop_per_token): N the parameters except the input embedding table (the output projection multiplies every
token, so it counts, tied or not), L layers, H query heads of Q dimensions, T the sequence length. By that convention
attention is counted as if non-causal and activation recomputation is not counted (MFU, not hardware FLOPs
utilisation: checkpointing lowers it). With packing, T is the row length, which overstates the attention a packed row
of short documents computes; `document_attention_flops` counts each document's own length instead.
MFU = FLOPs per token x tokens/s / (processes x the accelerator's dense bf16 peak), the peak from the GPU's name
(`PEAK_BF16_TFLOPS`) or the RADMETRICS_PEAK_TFLOPS environment variable; left out on CPU and unlisted GPUs.
"""

from __future__ import annotations

import os
import time

from transformers import TrainerCallback

# Dense bf16 tensor-core peaks, TFLOP/s (NVIDIA datasheets, dense = half the sparsity figure; torchtitan's table);
# the first entry whose words all occur in the upper-cased device name wins.
PEAK_BF16_TFLOPS = [
    (("H100", "NVL"), 835.0),
    (("H100", "PCIE"), 756.0),
    (("H100",), 989.0),
    (("H200", "NVL"), 835.0),
    (("H200",), 989.0),
    (("A100",), 312.0),
    (("L40S",), 362.0),
    (("A10G",), 125.0),
    (("L4",), 121.0),
]


def peak_tflops(device_name: str | None = None) -> float | None:
    """Peak bf16 TFLOP/s of `device_name` (default: this process's GPU), or None when unknown (CPU, an unlisted GPU).
    RADMETRICS_PEAK_TFLOPS overrides the table."""
    if os.environ.get("RADMETRICS_PEAK_TFLOPS"):
        return float(os.environ["RADMETRICS_PEAK_TFLOPS"])
    if device_name is None:
        import torch

        if not torch.cuda.is_available():
            return None
        device_name = torch.cuda.get_device_name()
    name = device_name.upper()
    return next((peak for words, peak in PEAK_BF16_TFLOPS if all(w in name for w in words)), None)


def _numel(parameter) -> int:
    return getattr(
        parameter, "ds_numel", parameter.numel()
    )  # under ZeRO-3 a rank holds a shard; ds_numel is the whole


def matmul_parameters(model) -> int:
    """N of the FLOP formula: all parameters but the input embedding table, the output projection counted even
    when it shares the embedding's tensor (its matmul runs for every token either way)."""
    embedding = model.get_input_embeddings().weight
    output_layer = model.get_output_embeddings()
    total = sum(_numel(p) for p in model.parameters())  # a tied tensor appears once
    tied_output = output_layer is not None and output_layer.weight is embedding
    return total - _numel(embedding) + (_numel(embedding) if tied_output else 0)


def attention_width(config) -> tuple[int, int]:
    """(layers, query heads x head dimension): L and H Q of the attention term."""
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return config.num_hidden_layers, config.num_attention_heads * head_dim


def flops_per_token(n_params: int, config, seq_len: int) -> int:
    """6 N + 12 L H Q T (PaLM appendix B)."""
    layers, width = attention_width(config)
    return 6 * n_params + 12 * layers * width * seq_len


def document_attention_flops(config, lengths) -> int:
    """12 L H Q sum(l^2): attention restricted to each packed document (non-causal convention kept)."""
    layers, width = attention_width(config)
    return 12 * layers * width * sum(n * n for n in lengths)


class ThroughputLogger(TrainerCallback):
    """Adds `tokens_per_second` (the whole job's: the Trainer's `num_input_tokens_seen` is summed over processes) and,
    where the peak is known, `mfu` to every training log."""

    def __init__(self, sequence_length: int):
        self.sequence_length = sequence_length
        self._last: tuple[float, int] | None = None
        self._flops: float | None = None
        self._peak: float | None = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self._last = (time.perf_counter(), state.num_input_tokens_seen)
        self._peak = peak_tflops()
        if model is None:
            return
        try:
            parameters = matmul_parameters(model)
        except (NotImplementedError, AttributeError):  # a wrapper without an embedding accessor: count every parameter
            parameters = sum(_numel(p) for p in model.parameters())
        config = model.config
        if not hasattr(config, "num_attention_heads"):  # a head over an encoder (CheXbert, span extractor)
            config = getattr(getattr(model, "encoder", None), "config", None)
        if config is not None and hasattr(config, "num_attention_heads"):
            self._flops = flops_per_token(parameters, config, self.sequence_length)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or self._last is None or "loss" not in logs:
            return
        now, tokens = time.perf_counter(), state.num_input_tokens_seen
        elapsed, seen = now - self._last[0], tokens - self._last[1]
        self._last = (now, tokens)
        if elapsed <= 0 or seen <= 0:
            return
        logs["tokens_per_second"] = round(seen / elapsed, 1)
        if self._peak and self._flops:
            processes = int(os.environ.get("WORLD_SIZE", "1"))
            logs["mfu"] = round(self._flops * seen / elapsed / (processes * self._peak * 1e12), 4)
