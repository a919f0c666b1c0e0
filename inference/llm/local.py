"""Local Hugging Face causal LM backend for the LLM engine (`backend: hf` in an endpoint YAML).

Requests arriving concurrently are gathered into batches of up to `endpoint.batch_size` and generated
together (left padding) in a worker thread, so the engine's cache, validation and accounting work the same
as for a server. Generation parameters: `max_tokens` (default 512), `temperature` (0 = greedy), `top_p`,
`stop` (strings; the answer is cut at the first one), `seed`.
"""

from __future__ import annotations

import asyncio

from ..loading.hub import inference_device, load_causal_lm
from .endpoint import Endpoint


def render_prompt(tokenizer, messages: list[dict]) -> str:
    """The tokenizer's chat template when it has one, else "role: content" lines and "assistant:"."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"


def cut_at_stop(text: str, stop) -> str:
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.index(s) for s in stops if s in text]
    return text[: min(cuts)] if cuts else text


class HFBackend:
    def __init__(self, endpoint: Endpoint, model=None, tokenizer=None):
        self.endpoint = endpoint
        if model is None:
            model, tokenizer = load_causal_lm(endpoint.model)
        self.model = model.eval().to(inference_device())
        self.tokenizer = tokenizer
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._queue: list[tuple[list[dict], dict, asyncio.Future]] = []
        self._worker: asyncio.Task | None = None

    async def complete(self, messages: list[dict], generation: dict) -> tuple[str, int, int]:
        future = asyncio.get_running_loop().create_future()
        self._queue.append((messages, generation, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let every request of this tick join the queue
        while self._queue:
            batch, self._queue = self._queue[: self.endpoint.batch_size], self._queue[self.endpoint.batch_size :]
            try:
                outputs = await asyncio.to_thread(self.generate, [m for m, _, _ in batch], batch[0][1])
            except Exception as exc:  # reported to every waiting request, not swallowed
                for _, _, future in batch:
                    future.set_exception(exc)
                continue
            for (_, _, future), output in zip(batch, outputs):
                future.set_result(output)

    def generate(self, conversations: list[list[dict]], generation: dict) -> list[tuple[str, int, int]]:
        """Batched generation; returns (text, prompt tokens, completion tokens) per conversation."""
        return generate_batch(
            self.model, self.tokenizer, [render_prompt(self.tokenizer, c) for c in conversations], generation
        )


def generate_batch(model, tokenizer, prompts: list[str], generation: dict) -> list[tuple[str, int, int]]:
    """One left-padded batch through `model.generate`: (text cut at the first stop string, prompt tokens,
    completion tokens) per prompt. `max_tokens` bounds the new tokens only, whatever the prompt length."""
    import torch

    tokenizer.padding_side = "left"
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
    temperature = float(generation.get("temperature") or 0.0)
    kwargs = {
        "max_new_tokens": int(generation.get("max_tokens") or 512),
        "pad_token_id": tokenizer.pad_token_id,
        "do_sample": temperature > 0,
    }
    if temperature > 0:
        kwargs.update(temperature=temperature, top_p=float(generation.get("top_p") or 1.0))
    if "seed" in generation:
        torch.manual_seed(int(generation["seed"]))
    with torch.no_grad():
        output = model.generate(**encoded, **kwargs)
    width = encoded["input_ids"].shape[1]
    results = []
    for i in range(len(prompts)):
        new = output[i, width:]
        new = new[new != tokenizer.pad_token_id]
        text = cut_at_stop(tokenizer.decode(new, skip_special_tokens=True), generation.get("stop"))
        results.append((text, int(encoded["attention_mask"][i].sum()), int(len(new))))
    return results


def generate_sorted(
    model, tokenizer, prompts: list[str], generation: dict, batch_size: int = 8, progress: bool = True
) -> list[tuple[str, int, int]]:
    """`generate_batch` over prompts sorted by token length (longest first, so padding is small and an
    out-of-memory error comes early), results returned in input order."""
    lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    order = sorted(range(len(prompts)), key=lambda i: -lengths[i])
    results: list = [None] * len(prompts)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(prompts), desc="generate", unit="prompt")
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for i, result in zip(chunk, generate_batch(model, tokenizer, [prompts[i] for i in chunk], generation)):
            results[i] = result
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return results
