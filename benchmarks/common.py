"""What the benchmark scripts share: where the repository and the results files are, the machine a figure was
measured on, and how a results file is written. Each script is run as `python benchmarks/<group>/<script>.py` and puts
this folder on sys.path (`sys.path.insert(0, str(Path(__file__).resolve().parents[1]))`) to import it."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
RESULTS = BENCHMARKS / "results"
CONFIGS = REPO / "configs"


def machine() -> str:
    """The CPU machine a figure was measured on, as the results files record it."""
    return f"{platform.machine()} ({platform.system()}), {os.cpu_count()} CPU cores, no GPU"


def device_name() -> str:
    """The device a GPU benchmark ran on: the CUDA GPU's name, else the CPU and its torch threads."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def write_results(name: str, results: dict) -> Path:
    """RESULTS/name, written as indented JSON."""
    out = RESULTS / name
    out.write_text(json.dumps(results, indent=2) + "\n")
    return out


def decoder_shape(hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int, **rest) -> dict:
    """A decoder config's size keywords (Llama, Mistral, Phi spell them alike) from the five numbers that set its
    cost, plus any other config keywords."""
    names = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads")
    return {**dict(zip(names, (hidden, intermediate, layers, heads, kv_heads))), **rest}
