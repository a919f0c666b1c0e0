"""CRIMSON's prompt (crimson-score 0.2.0, `CRIMSON/prompt_parts.build_prompt` and `CRIMSONScore._chat_completion`):
the system message and the user message assembled from the reference's parts, kept verbatim in
resources/crimson/prompt_parts.json (MIT; `{{` and `}}` stay literal, as the reference never formats them).

Sections, joined by a blank line, empty ones skipped: the objective, the patient context ("Patient Context:" and a
line `    KEY: VALUE` per field, in the order given), the reference and the candidate, the task, the significance
levels, the significance examples (guidelines only), how to apply them, the attribute severity levels, the error
categories, the matching criteria, the attribute error instructions, the attribute severity guidelines (guidelines
only), the context guidelines (guidelines only, and only with a context), the output format and the notes.
The reference drops the three guideline sections for its released model (`rajpurkarlab/medgemma-4b-it-crimson`,
"trained without them") when it is named by that exact Hub id on the hf or vllm backend; option `guidelines` exposes
that choice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files

RELEASED_MODEL = "rajpurkarlab/medgemma-4b-it-crimson"  # CRIMSONScore.DEFAULT_HF_MODEL


@lru_cache(maxsize=1)
def prompt_parts() -> dict:
    path = files("radmetrics.inference").joinpath("resources", "crimson", "prompt_parts.json")
    return json.loads(path.read_text(encoding="utf-8"))


def as_text(findings) -> str:
    """A report as the reference interpolates it: a list joined by spaces, anything else as str()."""
    return " ".join(findings) if isinstance(findings, list) else f"{findings}"


def user_prompt(reference, candidate, context: Mapping | None = None, guidelines: bool = True) -> str:
    parts = prompt_parts()["parts"]
    context_block = ""
    if context:
        context_block = "Patient Context:\n" + "".join(f"    {key}: {value}\n" for key, value in context.items())
    sections = [
        parts["OBJECTIVE"],
        context_block,
        f"Reference Findings (Ground Truth):\n{as_text(reference)}",
        f"Predicted Findings (Candidate):\n{as_text(candidate)}",
        parts["TASK_STEPS"],
        parts["CLINICAL_SIGNIFICANCE_LEVELS"],
        parts["SIGNIFICANCE_EXAMPLES"] if guidelines else "",
        parts["SIGNIFICANCE_APPLICATION"],
        parts["ATTRIBUTE_SEVERITY_LEVELS"],
        parts["ERROR_CATEGORIES"],
        parts["MATCHING_CRITERIA"],
        parts["ATTRIBUTE_ERROR_INSTRUCTIONS"],
        parts["ATTRIBUTE_SEVERITY_GUIDELINES"] if guidelines else "",
        parts["CONTEXT_GUIDELINES"] if guidelines and context else "",
        parts["OUTPUT_FORMAT"],
        parts["IMPORTANT_NOTES"],
    ]
    return "\n\n".join(section for section in sections if section)


def crimson_messages(
    reference, candidate, context: Mapping | None = None, guidelines: bool = True, system: bool = True
) -> list[dict]:
    """The chat the reference sends: its system message, then the user prompt. `system=False`: the user prompt alone,
    as the authors' fine-tuning script (finetuning/dataset.py) trained their released model."""
    user = {"role": "user", "content": user_prompt(reference, candidate, context, guidelines)}
    return [{"role": "system", "content": prompt_parts()["system_message"]}, user] if system else [user]
