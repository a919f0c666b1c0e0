"""CRIMSON (rajpurkarlab/CRIMSON; PyPI crimson-score 0.2.0): an LLM lists both reports' abnormal findings with their
clinical significance, matches them and names the false, missing and attribute errors; the score weighs them by
significance into (-1, 1], 0 being no better than a normal template (score.py). Prompt: prompt.py; parser: parse.py.

Each pair's patient context (`Scorer(...)(references, candidates, context=[{field: value}, ...])`, or
`radmetrics score --context-fields COLUMN[=NAME] ...` from the references file) enters the prompt as the reference
puts it there. Judged through radmetrics' LLM engine with `--endpoint` (an OpenAI-compatible server of the released
`rajpurkarlab/medgemma-4b-it-crimson`, or an API model as the reference's OpenAI option), cached and resumable as the
other judges. An answer the reference cannot parse or score leaves the pair unscored and counted, never a default.
Options: `guidelines` (true: the reference's prompt with its three guideline sections, as it prompts an API model;
false: without them, as it prompts its released model, which was trained without them), `request` ("reference": the
reference's OpenAI request, seed 42, temperature 0 and a JSON object answer; "endpoint": the endpoint YAML's own
generation settings), `max_reprompts` (0, as the reference: it never re-asks).
Keys: `crimson`, the counts of false findings, missing findings and attribute errors, their weighted counts
(`crimson_weighted_*`, the reference's `weighted_error_counts`) and the matched reference findings.
"""

from __future__ import annotations

from ..base import Metric, MetricOutput, Option
from .parse import CrimsonParseError, parse_crimson_answer
from .prompt import crimson_messages
from .score import crimson_score

# The reference's OpenAI request (CRIMSONScore._chat_completion): no max_tokens, no top_p.
REFERENCE_REQUEST = {"seed": 42, "temperature": 0.0, "response_format": {"type": "json_object"}}
COUNTS = ("false_findings", "missing_findings", "attribute_errors")


def evaluate_answer(text: str) -> tuple[dict, dict]:
    """(evaluation, score) of one answer; CrimsonParseError where the reference would raise."""
    evaluation = parse_crimson_answer(text)
    try:
        return evaluation, crimson_score(evaluation)
    except (AttributeError, KeyError, TypeError) as exc:  # the reference's own failures on a malformed evaluation
        raise CrimsonParseError(f"the evaluation cannot be scored ({type(exc).__name__}: {exc})") from exc


class Crimson(Metric):
    name = "crimson"
    options = {
        "guidelines": Option(
            True,
            True,
            "the prompt's guideline sections (false: as the reference prompts its released model)",
            type=bool,
        ),
        "request": Option(
            "reference",
            True,
            "reference (seed 42, temperature 0, a JSON object answer, as the reference's OpenAI call) or endpoint "
            "(the endpoint YAML's generation settings)",
            type=str,
            choices=("reference", "endpoint"),
        ),
        "max_reprompts": Option(
            0, True, "re-asks after an unreadable answer (the reference's 0)", type=int, minimum=0
        ),
    }
    keys = (
        "crimson",
        *(f"crimson_{k}" for k in COUNTS),
        *(f"crimson_weighted_{k}" for k in COUNTS),
        "crimson_matched_findings",
    )
    higher_is_better = {
        "crimson": True,
        **{f"crimson_{k}": False for k in COUNTS},
        **{f"crimson_weighted_{k}": False for k in COUNTS},
        "crimson_matched_findings": True,
    }
    reference = "CRIMSON (rajpurkarlab/CRIMSON, crimson-score 0.2.0: prompt, JSON parser and weighted score)"
    citation = """@misc{crimson2026, title={CRIMSON: A Clinically-Grounded LLM-Based Metric for Generative Radiology \
Report Evaluation},
  author={Rajpurkar Lab}, year={2026}, howpublished={\\url{https://github.com/rajpurkarlab/CRIMSON}}}"""
    judged_by_llm = True
    accepts_context = True

    @classmethod
    def display_detail(cls, detail):
        from ..display import table

        evaluation = detail.get("evaluation") or {}
        errors = evaluation.get("errors", {}) if isinstance(evaluation, dict) else {}
        false, missing = set(errors.get("false_findings", [])), set(errors.get("missing_findings", []))
        attributes: dict = {}
        for error in errors.get("attribute_errors", []):
            attributes.setdefault(error.get("ref_id"), []).append(
                f"{'/'.join(error.get('error_types', []))} ({error.get('severity')})"
            )
        rows = []
        for side, key, wrong in (
            ("reference", "reference_findings", missing),
            ("candidate", "predicted_findings", false),
        ):
            for finding in evaluation.get(key, []) if isinstance(evaluation, dict) else []:
                label = ("missing" if side == "reference" else "false") if finding.get("id") in wrong else ""
                label = label or "; ".join(attributes.get(finding.get("id"), [])) or "matched"
                rows.append(
                    [side, finding.get("id"), finding.get("finding"), finding.get("clinical_significance"), label]
                )
        return {
            "notes": [f"CRIMSON {detail.get('crimson_score')}"],
            "tables": [table("findings", ["report", "id", "finding", "clinical significance", "error"], rows)],
        }

    def compute(self, references, candidates, context=None):
        from ...llm.engine import LLMTask

        engine = self.llm_engine(self.options["max_reprompts"])
        if self.options["request"] == "reference":
            engine.generation = dict(REFERENCE_REQUEST)
        contexts = context if context is not None else [None] * len(references)
        guidelines = self.options["guidelines"]
        tasks = [
            LLMTask(f"crimson-{i}", crimson_messages(r, c, patient, guidelines), evaluate_answer)
            for i, (r, c, patient) in enumerate(zip(references, candidates, contexts))
        ]
        values = {key: [] for key in self.keys}
        details = []
        for result in engine.run(tasks):
            if not result.ok:
                for key in self.keys:
                    values[key].append(float("nan"))
                details.append({"response": result.text, "error": result.error})
                continue
            evaluation, scored = result.parsed
            values["crimson"].append(float(scored["crimson_score"]))
            for key in COUNTS:
                values[f"crimson_{key}"].append(float(scored["error_counts"][key]))
                values[f"crimson_weighted_{key}"].append(float(scored["weighted_error_counts"][key]))
            values["crimson_matched_findings"].append(float(scored["matched_findings"]))
            details.append({"evaluation": evaluation, **{k: v for k, v in scored.items() if k != "matched_findings"}})
        return MetricOutput(values, details=details, meta={"llm": engine.summary()})
