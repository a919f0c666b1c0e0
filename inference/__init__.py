"""radmetrics.inference: the thin scoring package.

Importing this package is cheap: names below are resolved on first use, so no torch-heavy or
network code runs at import time.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "default_encoder": ".loading.hub",
    "load_tokenizer": ".loading.hub",
    "load_pretrained": ".loading.hub",
    "ModelLoadError": ".loading.hub",
    "load_manifest": ".loading.checkpoint",
    "resolve_checkpoint": ".loading.checkpoint",
    "CheckpointError": ".loading.checkpoint",
    "COMPONENTS": ".loading.components",
    "parse_green_response": ".metrics.green.format",
    "green_prompt": ".metrics.green.format",
    "radcliq_v0": ".metrics.radcliq.composite",
    "radcliq_v1": ".metrics.radcliq.composite",
    "Scorer": ".scoring.scorer",
    "get_component": ".loading.components",
    "radgraph_f1": ".metrics.radgraph.f1",
    "radgraph_radcliq": ".metrics.radgraph.f1",
    "dygie_to_annotation": ".metrics.radgraph.annotation",
    "chexbert_f1": ".metrics.chexbert.f1",
    "ratescore_from_entities": ".metrics.ratescore.score",
    "Endpoint": ".llm.endpoint",
    "LLMEngine": ".llm.engine",
    "LLMTask": ".llm.engine",
    "number_lines": ".metrics.fineradscore.judge",
    "fineradscore_aggregate": ".metrics.fineradscore.judge",
    "box_precision": ".metrics.radfact.judge",
    "RadGraphExtractor": ".metrics.radgraph.extractor",
    "RateNerSpanTagger": ".metrics.ratescore.taggers",
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
