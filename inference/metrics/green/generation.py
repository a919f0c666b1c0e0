"""GREEN generation (Ostmeier et al. 2024, section 3.2).

Generation with an exported GREEN model: the appendix A.1 prompt (each report cut to its first 300 words, as
the reference does), the model's chat template, greedy decoding in batches sorted by prompt length with left
padding, and a new-token budget (`max_new_tokens`) independent of the prompt length: the reference's shared
2048-token prompt+output limit silently truncates answers to long reports. Across several processes
(`accelerate launch`), the pairs are sharded and the results gathered back in input order. The same prompt and
parser also run through the LLM engine, so a vLLM/TGI server hosting a GREEN checkpoint can generate.

A response the parser cannot read is reported (score None, counted), not scored 0.
"""

from __future__ import annotations

import os

from ...llm.continuous import generate_continuous
from ...llm.local import generate_sorted, render_prompt
from ...loading import extras
from ...loading.checkpoint import load_manifest
from ...loading.hub import load_causal_lm
from .format import NEEDS_FINDINGS, PROMPTS

MAX_REPORT_WORDS = 300
ENGINES = ("generate", "continuous")


def truncate_words(text: str, max_words: int = MAX_REPORT_WORDS) -> str:
    words = text.split()
    return " ".join(words[:max_words])


def green_messages(
    reference: str, candidate: str, max_words: int = MAX_REPORT_WORDS, prompt: str = "green"
) -> list[dict]:
    """The user turn: `prompt` "green" (appendix A.1, what released GREEN models read), "short"
    (`format.short_prompt`), "numbered" (`format.numbered_prompt`, the statements numbered) or "findings"
    (`format.findings_prompt`: `reference` and `candidate` are then each report's findings, `format.findings_text`)."""
    if prompt not in PROMPTS:
        raise ValueError(f"GREEN prompt {prompt!r}: expected one of {sorted(PROMPTS)}")
    if prompt in NEEDS_FINDINGS:  # findings lists, one per line: short, and their lines must survive
        return [{"role": "user", "content": PROMPTS[prompt](reference, candidate)}]
    return [
        {
            "role": "user",
            "content": PROMPTS[prompt](truncate_words(reference, max_words), truncate_words(candidate, max_words)),
        }
    ]


def generate_green_responses(
    model,
    tokenizer,
    references,
    candidates,
    batch_size: int = 8,
    max_new_tokens: int = 512,
    progress: bool = True,
    shard: bool = True,
    prompt: str = "green",
    engine: str = "generate",
) -> list[str]:
    """GREEN analyses of every pair from a causal LM. Under `accelerate launch` (and `shard`), each process
    generates its share of the pairs and all processes receive every result, in input order. `engine`: "generate"
    (padded batches sorted by length through `model.generate`) or "continuous" (transformers' continuous batching,
    `llm/continuous.py`), whose greedy answers are the same in fp32."""
    if engine not in ENGINES:
        raise ValueError(f"GREEN engine {engine!r}: expected one of {', '.join(ENGINES)}")

    state = process_state() if shard else None
    indices = list(range(len(references)))
    if state is not None and state.num_processes > 1:
        with state.split_between_processes(indices) as mine:
            indices = list(mine)
    prompts = [render_prompt(tokenizer, green_messages(references[i], candidates[i], prompt=prompt)) for i in indices]
    generate = generate_continuous if engine == "continuous" else generate_sorted
    outputs = generate(
        model,
        tokenizer,
        prompts,
        {"max_tokens": max_new_tokens, "temperature": 0.0},
        batch_size,
        progress=progress and (state is None or state.is_main_process),
    )
    results = [(i, text) for i, (text, _, _) in zip(indices, outputs)]
    if state is not None and state.num_processes > 1:
        from accelerate.utils import gather_object

        results = gather_object(results)
    return [text for _, text in sorted(results)]


def several_processes() -> bool:
    """Whether a launcher (accelerate launch, torchrun) started this process as one of several."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def process_state():
    """accelerate's PartialState, which shards the pairs across processes; None in a single process without accelerate
    (a core install generates alone). Several processes without accelerate cannot share the work: say so."""
    if not extras.installed("accelerate"):
        if several_processes():
            extras.require("accelerate", extra="train", for_what="GREEN generation across several processes")
        return None
    from accelerate import PartialState

    return PartialState()


def load_green_model(path: str):
    """An exported GREEN checkpoint (manifest checked) as (model, tokenizer, prompt) for generation: `prompt` is the
    one it was trained with (its training config's `prompt`; "green" for exports that predate the option)."""
    directory, manifest = load_manifest(path, "green")
    model, tokenizer = load_causal_lm(directory, min_vocab=50)
    return model, tokenizer, trained_prompt(manifest)


def trained_prompt(manifest: dict) -> str:
    """The prompt an export was trained with ("green" for exports that predate the option)."""
    return manifest.get("training_config", {}).get("prompt", "green")
