"""CRIMSON answers from a model loaded here: the authors' released model (or a copy of it) generated as crimson-score
0.2.0's `CRIMSONScore(api="hf")` does, or a radmetrics export generated as the other exports are.

The released model, as `CRIMSONScore.__init__`, `_chat_completion` and `_chat_completion_batch` run it:
- `pipeline("text-generation", model=..., dtype=torch.bfloat16, device_map="auto")`, the tokenizer padded on the
  left; the chat (system message, user prompt) goes to the pipeline, which renders the model's chat template with the
  generation prompt and tokenizes it without adding special tokens again. `device_map="auto"` needs accelerate (the
  train extra); a core install without it puts the model where "auto" puts a model that fits: the first GPU, else
  the CPU (`placement`), so only a model spread over several GPUs needs accelerate;
- generation: the model's own generation_config.json when its repository has one (passed whole, as the reference
  does), else greedy with `max_new_tokens=8192, max_length=None`. Passed whole, a config that samples (Gemma 3's and
  MedGemma's do: `do_sample`, top-k 64, top-p 0.95) is completed by the pipeline's defaults (transformers 5.24: a
  temperature of 0.7 and at most 256 new tokens, too few for most CRIMSON answers, which are then cut and unreadable);
  the reference sets no seed, radmetrics seeds each call (0) so that a run repeats. Option `generation=greedy` always
  decodes as the reference's fallback: greedy, up to 8,192 new tokens;
- the answer: the last message's content (the new tokens decoded with special tokens skipped);
- one pair per call at `batch_size` 1 (the reference's `evaluate`); larger batches are its `evaluate_batch`
  (padded chunks of `batch_size`).

An export: its own chat template, greedy decoding up to `max_new_tokens`, batches sorted by length
(`radmetrics.inference.llm.local.generate_sorted`).
"""

from __future__ import annotations

from pathlib import Path

from ...llm.local import generate_sorted, render_prompt
from ...loading import extras

REFERENCE_FALLBACK = {"max_new_tokens": 8192, "max_length": None, "do_sample": False}  # no generation_config.json


def placement() -> dict:
    """The reference's `device_map="auto"` where accelerate is installed; without it, the one device auto would use for
    a model that fits on it: the first GPU, else the CPU."""
    if extras.installed("accelerate"):
        return {"device_map": "auto"}
    import torch

    return {"device": "cuda:0" if torch.cuda.is_available() else "cpu"}


class ReleasedCrimson:
    """The reference's hf backend around a local directory of the released model."""

    def __init__(self, directory: str | Path, batch_size: int = 1, generation: str = "reference"):
        import torch
        from transformers import pipeline

        self.batch_size, self.generation = batch_size, generation
        self.pipe = pipeline("text-generation", model=str(directory), dtype=torch.bfloat16, **placement())
        if self.pipe.tokenizer.padding_side != "left":
            self.pipe.tokenizer.padding_side = "left"
        self.has_generation_config = not self.pipe.model.generation_config._from_model_config

    def generation_kwargs(self) -> dict:
        if self.has_generation_config and self.generation == "reference":
            return {"generation_config": self.pipe.model.generation_config}
        return dict(REFERENCE_FALLBACK)

    def samples(self) -> bool:
        kwargs = self.generation_kwargs()
        config = kwargs.get("generation_config")
        return bool(config.do_sample) if config is not None else bool(kwargs["do_sample"])

    def answers(self, conversations: list[list[dict]], progress: bool = True) -> list[str]:
        """One answer per conversation, in order."""
        import torch
        from tqdm.auto import tqdm

        kwargs, seeded = self.generation_kwargs(), self.samples()
        texts: list[str] = []
        with tqdm(total=len(conversations), desc="crimson", unit="pair", disable=not progress) as bar:
            for start in range(0, len(conversations), self.batch_size):
                chunk = conversations[start : start + self.batch_size]
                if seeded:
                    torch.manual_seed(0)
                if self.batch_size == 1:
                    outputs = [self.pipe(chunk[0], **kwargs)]
                else:
                    outputs = self.pipe(chunk, batch_size=self.batch_size, **kwargs)
                texts += [output[0]["generated_text"][-1]["content"] for output in outputs]
                bar.update(len(chunk))
        return texts


def export_answers(
    model, tokenizer, conversations: list[list[dict]], max_new_tokens: int, batch_size: int, progress: bool = True
) -> list[str]:
    """Greedy answers of a radmetrics CRIMSON export, rendered with its chat template."""
    prompts = [render_prompt(tokenizer, conversation) for conversation in conversations]
    generation = {"temperature": 0.0, "max_tokens": max_new_tokens}
    return [text for text, _, _ in generate_sorted(model, tokenizer, prompts, generation, batch_size, progress)]
