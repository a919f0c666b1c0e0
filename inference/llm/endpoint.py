"""An LLM endpoint: a small YAML naming the backend, the model, where it is served and how hard to push it.

    # configs/llm/openai_gpt4o.yaml
    name: gpt-4o
    backend: openai            # openai (any chat-completions server: OpenAI, vLLM, TGI, Ollama), azure, or hf
    model: gpt-4o
    base_url: null             # e.g. http://localhost:8000/v1 for vLLM
    api_key_env: OPENAI_API_KEY   # the variable to read the key from; the key itself is never written anywhere
    max_in_flight: 16
    requests_per_minute: 500
    generation: {temperature: 0.0, max_tokens: 1024}

For `backend: hf`, `model` is a local directory (or Hub id) of a causal LM, run with batched generation.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..loading.extras import require

BACKENDS = ("openai", "azure", "hf")
CLIENT_BACKENDS = ("openai", "azure")  # served over HTTP through the `openai` client (the llm extra)


class EndpointError(ValueError):
    pass


@dataclass
class Endpoint:
    model: str
    backend: str = "openai"
    name: str = ""
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    api_version: str | None = None  # Azure
    max_in_flight: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    price_per_million_input: float | None = None  # currency units per 10^6 prompt tokens, for cost accounting
    price_per_million_output: float | None = None
    batch_size: int = 8  # hf backend
    generation: dict = field(default_factory=dict)  # temperature, max_tokens, top_p, stop, seed

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise EndpointError(
                f"endpoint {self.name or self.model!r}: unknown backend {self.backend!r}; expected one of {BACKENDS}"
            )
        if self.max_in_flight < 1:
            raise EndpointError(f"endpoint {self.name or self.model!r}: max_in_flight must be at least 1")
        self.name = self.name or self.model

    @classmethod
    def from_yaml(cls, path: str | Path) -> Endpoint:
        import yaml

        values = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise EndpointError(f"{path}: unknown endpoint keys {unknown}; known: {sorted(known)}")
        if "model" not in values:
            raise EndpointError(f"{path}: an endpoint needs a `model`")
        return cls(**values)

    def api_key(self) -> str | None:
        """The key from the named environment variable (None for servers that need none)."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if key is None and self.base_url is None and self.backend != "hf":
            raise EndpointError(f"endpoint {self.name!r}: environment variable {self.api_key_env} is not set")
        return key

    def public(self) -> dict:
        """The endpoint as written to manifests and cache keys: no secret, only the variable's name."""
        return asdict(self)


def require_client(endpoint: Endpoint | str | Path) -> None:
    """An endpoint served over HTTP (backend openai or azure) needs the `openai` client from the `llm` extra: said in
    one line before any request. `backend: hf` runs a local model and needs no client."""
    if not isinstance(endpoint, Endpoint):
        endpoint = Endpoint.from_yaml(endpoint)
    if endpoint.backend in CLIENT_BACKENDS:
        require("openai", extra="llm", for_what=f"the {endpoint.backend} endpoint {endpoint.name!r}")
