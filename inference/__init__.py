"""radmetrics.inference: the thin scoring package.

Importing this package is cheap: names below are resolved on first use, so no torch-heavy or
network code runs at import time.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "default_encoder": ".models",
    "load_tokenizer": ".models",
    "load_pretrained": ".models",
    "ModelLoadError": ".models",
    "load_manifest": ".checkpoint",
    "resolve_checkpoint": ".checkpoint",
    "CheckpointError": ".checkpoint",
    "COMPONENTS": ".components",
    "parse_green_response": ".green_format",
    "green_prompt": ".green_format",
    "radcliq_v0": ".radcliq",
    "radcliq_v1": ".radcliq",
    "Scorer": ".scorer",
    "get_component": ".components",
    "radgraph_f1": ".radgraph_f1",
    "radgraph_radcliq": ".radgraph_f1",
    "dygie_to_annotation": ".radgraph_annotation",
    "chexbert_f1": ".chexbert_f1",
    "ratescore_from_entities": ".ratescore",
    "Endpoint": ".llm_endpoint",
    "LLMEngine": ".llm_engine",
    "LLMTask": ".llm_engine",
    "number_lines": ".fineradscore",
    "fineradscore_aggregate": ".fineradscore",
    "box_precision": ".radfact",
    "RadGraphExtractor": ".span_extraction",
    "RateNerSpanTagger": ".span_extraction",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'radmetrics.inference' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
