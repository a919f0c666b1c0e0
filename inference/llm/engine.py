"""One engine for every LLM call (teacher annotation, error injection, FineRadScore, RadFact).

- Concurrency: asyncio with at most `endpoint.max_in_flight` requests in flight, optional requests- and
  tokens-per-minute limits.
- Retries: exponential backoff with jitter on 429 (honouring Retry-After), 5xx, timeouts, connection
  errors and malformed responses; other errors (400, 401, 404) fail the item at once.
- Validation: a task's `validate(text)` returns the parsed answer or raises ValueError; the engine then
  re-prompts (the invalid answer and the reason go back to the model) up to `max_reprompts` times.
- Cache: every answer is committed to SQLite as it arrives (`AnswerCache`), so a rerun re-sends nothing
  already answered; an answer the validator refused is marked and asked again on a rerun, not replayed.
- Honesty: an item that cannot be answered is a failed `LLMResult` with its reason, counted in the totals;
  it never becomes a default answer. Token and cost totals and a run manifest (no secrets) are kept.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic
from .cache import AnswerCache, cache_key
from .endpoint import Endpoint, require_client
from .local import HFBackend

REPROMPT = (
    "Your previous answer could not be used: {error}\n"
    "Answer the original request again, following the required format exactly."
)


def json_object_text(text: str) -> str:
    """The JSON object in an LLM answer: inside a ```json fence if there is one, from the first "{" to the last "}"."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the answer holds no JSON object")
    return body[start : end + 1]


class TransientLLMError(Exception):
    """Worth retrying (rate limit, server error, timeout, connection, malformed response)."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind, self.retry_after = kind, retry_after


class PermanentLLMError(Exception):
    """Not worth retrying (bad request, authentication, unknown model)."""


@dataclass
class LLMTask:
    id: str
    messages: list[dict]
    validate: Callable[[str], Any] | None = None


@dataclass
class LLMResult:
    id: str
    ok: bool
    text: str | None = None
    parsed: Any = None
    error: str | None = None
    reprompts: int = 0
    from_cache: bool = False


@dataclass
class RunTotals:
    tasks: int = 0
    answered: int = 0
    failed: int = 0
    requests_sent: int = 0
    retries: int = 0
    reprompts: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    transient_errors: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)  # [{"id", "error"}]


class RateLimiter:
    """Sliding one-minute window over request starts and (estimated) tokens."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self._events: deque[tuple[float, int]] = deque()

    async def acquire(self, tokens: int) -> None:
        if not self.rpm and not self.tpm:
            return
        while True:
            now = time.monotonic()
            while self._events and now - self._events[0][0] >= 60:
                self._events.popleft()
            used = sum(t for _, t in self._events)
            if (not self.rpm or len(self._events) < self.rpm) and (
                not self.tpm or not self._events or used + tokens <= self.tpm
            ):
                self._events.append((now, tokens))
                return
            await asyncio.sleep(max(0.01, 60 - (now - self._events[0][0])))


def estimate_tokens(messages: list[dict], generation: dict) -> int:
    """Rough token count of a request for the tokens-per-minute limit (4 characters a token)."""
    return sum(len(m.get("content") or "") for m in messages) // 4 + int(generation.get("max_tokens") or 0)


def _retry_after(response) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAIBackend:
    """Chat completions through the official `openai` client (OpenAI, Azure, vLLM, TGI, Ollama)."""

    def __init__(self, endpoint: Endpoint):
        try:
            import openai
        except ImportError as exc:
            raise ImportError("the openai backend needs the `llm` extra: pip install 'radmetrics[llm]'") from exc
        self._openai = openai
        key = endpoint.api_key()
        if endpoint.backend == "azure":
            self.client = openai.AsyncAzureOpenAI(
                api_key=key,
                azure_endpoint=endpoint.base_url,
                api_version=endpoint.api_version,
                max_retries=0,
                timeout=endpoint.timeout_s,
            )
        else:
            self.client = openai.AsyncOpenAI(
                api_key=key or "not-needed", base_url=endpoint.base_url, max_retries=0, timeout=endpoint.timeout_s
            )
        self.model = endpoint.model

    async def complete(self, messages: list[dict], generation: dict) -> tuple[str, int, int]:
        openai = self._openai
        try:
            response = await self.client.chat.completions.create(model=self.model, messages=messages, **generation)
        except openai.RateLimitError as exc:
            raise TransientLLMError("rate_limited", str(exc), _retry_after(exc.response)) from exc
        except openai.APITimeoutError as exc:
            raise TransientLLMError("timeout", str(exc)) from exc
        except openai.APIConnectionError as exc:
            raise TransientLLMError("connection", str(exc)) from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409, 425):
                raise TransientLLMError(f"http_{exc.status_code}", str(exc), _retry_after(exc.response)) from exc
            raise PermanentLLMError(f"http_{exc.status_code}: {exc}") from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
            raise TransientLLMError("malformed_response", str(exc)) from exc
        try:
            text = response.choices[0].message.content
            usage = response.usage
        except (AttributeError, IndexError, TypeError) as exc:
            raise TransientLLMError(
                "malformed_response", f"no choices[0].message.content in {str(response)[:200]!r}"
            ) from exc
        if not isinstance(text, str):
            raise TransientLLMError("malformed_response", "the answer has no text content")
        return text, getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0


class LLMEngine:
    def __init__(
        self,
        endpoint: Endpoint,
        cache: str | Path | AnswerCache,
        max_reprompts: int = 0,
        progress: bool = True,
        backend=None,
    ):
        if backend is None:
            require_client(endpoint)
        self.endpoint = endpoint
        self.cache = cache if isinstance(cache, AnswerCache) else AnswerCache(cache)
        self.max_reprompts = max_reprompts
        self.progress = progress
        self.generation = dict(endpoint.generation)
        self._backend = backend
        self.totals = RunTotals()
        self.started: float | None = None

    @property
    def backend(self):
        if self._backend is None:
            if self.endpoint.backend == "hf":
                self._backend = HFBackend(self.endpoint)
            else:
                self._backend = OpenAIBackend(self.endpoint)
        return self._backend

    def run(self, tasks: Sequence[LLMTask], manifest: str | Path | None = None) -> list[LLMResult]:
        """Answer every task (cache first); failures are results with `ok=False`, listed in `self.totals`."""
        self.started = self.started or time.time()
        results = asyncio.run(self.run_async(tasks))
        if manifest:
            self.write_manifest(manifest)
        return results

    async def run_async(self, tasks: Sequence[LLMTask]) -> list[LLMResult]:
        ids = Counter(t.id for t in tasks)
        duplicated = [i for i, n in ids.items() if n > 1]
        if duplicated:
            raise ValueError(f"LLM task ids must be unique; repeated: {duplicated[:5]}")
        self.totals.tasks += len(tasks)
        self._semaphore = asyncio.Semaphore(self.endpoint.max_in_flight)
        self._limiter = RateLimiter(self.endpoint.requests_per_minute, self.endpoint.tokens_per_minute)
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(tasks), desc=f"LLM {self.endpoint.name}", unit="item")

        async def one(task: LLMTask) -> LLMResult:
            result = await self._run_task(task)
            if bar is not None:
                bar.update(1)
            return result

        try:
            results = await asyncio.gather(*(one(t) for t in tasks))
        finally:
            if bar is not None:
                bar.close()
        for result in results:
            if result.ok:
                self.totals.answered += 1
            else:
                self.totals.failed += 1
                self.totals.failures.append({"id": result.id, "error": result.error})
        self._account_cost()
        return list(results)

    async def _run_task(self, task: LLMTask) -> LLMResult:
        messages, all_cached, reason = list(task.messages), True, None
        for round_ in range(self.max_reprompts + 1):
            try:
                text, cached, key = await self._answer(messages)
            except (TransientLLMError, PermanentLLMError) as exc:
                return LLMResult(task.id, False, error=str(exc), reprompts=round_)
            all_cached &= cached
            if task.validate is None:
                return LLMResult(task.id, True, text, text, reprompts=round_, from_cache=all_cached)
            try:
                return LLMResult(task.id, True, text, task.validate(text), reprompts=round_, from_cache=all_cached)
            except ValueError as exc:
                reason = str(exc)
                self.cache.mark_invalid(key)
                if round_ < self.max_reprompts:
                    self.totals.reprompts += 1
                    messages = [
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": REPROMPT.format(error=reason)},
                    ]
        return LLMResult(
            task.id,
            False,
            text,
            error=f"invalid answer after {self.max_reprompts} re-prompts: {reason}",
            reprompts=self.max_reprompts,
        )

    async def _answer(self, messages: list[dict]) -> tuple[str, bool, str]:
        """(answer, whether it came from the cache, its cache key)."""
        key = cache_key(self.endpoint, messages, self.generation)
        hit = self.cache.get(key)
        if hit is not None:
            self.totals.cache_hits += 1
            return hit[0], True, key
        async with self._semaphore:
            text, prompt_tokens, completion_tokens = await self._call_with_retries(messages)
        self.cache.put(key, self.endpoint.model, text, prompt_tokens, completion_tokens)
        self.totals.prompt_tokens += prompt_tokens
        self.totals.completion_tokens += completion_tokens
        return text, False, key

    async def _call_with_retries(self, messages: list[dict]) -> tuple[str, int, int]:
        endpoint, attempt = self.endpoint, 0
        while True:
            await self._limiter.acquire(estimate_tokens(messages, self.generation))
            self.totals.requests_sent += 1
            try:
                return await self.backend.complete(messages, self.generation)
            except TransientLLMError as exc:
                self.totals.transient_errors[exc.kind] = self.totals.transient_errors.get(exc.kind, 0) + 1
                if attempt == endpoint.max_retries:
                    raise TransientLLMError(
                        exc.kind, f"gave up after {attempt + 1} attempts; last error {exc}"
                    ) from exc
                self.totals.retries += 1
                backoff = min(endpoint.backoff_max_s, endpoint.backoff_base_s * 2**attempt) * random.uniform(0.5, 1.0)
                await asyncio.sleep(max(backoff, exc.retry_after or 0.0))
                attempt += 1

    def _account_cost(self) -> None:
        e = self.endpoint
        if e.price_per_million_input is not None and e.price_per_million_output is not None:
            self.totals.cost = (
                self.totals.prompt_tokens * e.price_per_million_input
                + self.totals.completion_tokens * e.price_per_million_output
            ) / 1e6

    def summary(self) -> dict:
        """The run's endpoint (without secrets), cache location, re-prompt limit and totals."""
        return {
            "endpoint": self.endpoint.public(),
            "cache": str(self.cache.path),
            "max_reprompts": self.max_reprompts,
            "totals": asdict(self.totals),
        }

    def write_manifest(self, path: str | Path) -> None:
        manifest = {**self.summary(), "started": self.started, "finished": time.time()}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(Path(path), json.dumps(manifest, indent=2))
