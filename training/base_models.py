"""The Hub base models the configs name, with what the repo needs to know about each: its architecture family (the
rehearsal builds a tiny look-alike of it, lookalike.py) and its Hub licence identifier (from the model's Hub card; the
exported model card inherits it, export.py)."""

from __future__ import annotations

from typing import NamedTuple


class BaseModel(NamedTuple):
    family: str
    licence: str


BASE_MODELS = {
    "meta-llama/Llama-2-7b-hf": BaseModel("llama", "llama2"),
    "mistralai/Mistral-7B-v0.1": BaseModel("mistral", "apache-2.0"),
    "microsoft/phi-2": BaseModel("phi", "mit"),
    "microsoft/deberta-v3-base": BaseModel("deberta-v2", "mit"),
    "bert-base-uncased": BaseModel("bert", "apache-2.0"),
    "google-bert/bert-base-uncased": BaseModel("bert", "apache-2.0"),
    "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract-fulltext": BaseModel("bert", "mit"),
    "sentence-transformers/all-MiniLM-L6-v2": BaseModel("bert", "apache-2.0"),
    "HuggingFaceTB/SmolLM2-135M-Instruct": BaseModel("llama", "apache-2.0"),
    "google/medgemma-4b-it": BaseModel("gemma3", "health-ai-developer-foundations"),
}
# Hub licence identifiers whose terms live on a page of their own (the card links it, as the base model's card does)
LICENCE_LINKS = {
    "health-ai-developer-foundations": "https://developers.google.com/health-ai-developer-foundations/terms",
}
