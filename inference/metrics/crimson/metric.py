"""CRIMSON (rajpurkarlab/CRIMSON; PyPI crimson-score 0.2.0): an LLM lists both reports' abnormal findings with their
clinical significance, matches them and names the false, missing and attribute errors; the score weighs them by
significance into (-1, 1], 0 being no better than a normal template (score.py). Prompt: prompt.py; parser: parse.py.

Each pair's patient context (`Scorer(...)(references, candidates, context=[{field: value}, ...])`, or
`radmetrics score --context-fields COLUMN[=NAME] ...` from the references file) enters the prompt as the reference
puts it there. Who answers:
- a model loaded here, component `crimson` (`--components crimson=medgemma-4b-it-crimson`, the authors' released
  model and the reference's default, from the Hugging Face cache; `crimson=PATH` for a local copy; or a radmetrics
  export of the `crimson/sft` recipe): the released model is generated as the reference's hf backend does (local.py),
  an export greedily with its own chat template and the prompt it was trained with (its guidelines, and the system
  message only if it was trained with one);
- else an OpenAI-compatible endpoint (`--endpoint`: a vLLM server of the released model, or an API model as the
  reference's OpenAI option), cached and resumable as the other judges.
An answer the reference cannot parse or score leaves the pair unscored and counted, never a default.
Options: `guidelines` (the prompt's three guideline sections; unset: as the reference, without them for its released
model named by its catalogue name or Hub id, as it was trained, and with them otherwise, a local copy of the released
weights included), `generation` (a released model's decoding: "reference", the model's generation_config.json passed
whole as the reference does, else greedy up to 8,192 new tokens; "greedy": always the latter), `request`
("reference": the reference's OpenAI request, seed 42, temperature 0 and a JSON object answer; "endpoint": the
endpoint YAML's own generation settings), `max_reprompts` (0, as the reference: it never re-asks), `batch_size` (1:
the reference's `evaluate`, one pair per call) and `max_new_tokens` (an export's answer limit). A signature pins the
options that apply to who answers.
Keys: `crimson`, the counts of false findings, missing findings and attribute errors, their weighted counts
(`crimson_weighted_*`, the reference's `weighted_error_counts`) and the matched reference findings.
"""

from __future__ import annotations

from functools import lru_cache

from ...llm.engine import LLMTask
from ...loading.checkpoint import load_manifest
from ...loading.hub import load_causal_lm
from ...loading.released import ARTEFACTS, fetch, identify
from ..base import Metric, MetricOutput, Option, OptionError
from ..display import table
from .local import ReleasedCrimson, export_answers
from .parse import CrimsonParseError, parse_crimson_answer
from .prompt import RELEASED_MODEL, crimson_messages
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
            None,
            True,
            "the prompt's guideline sections (unset: as the reference, without them for its released model named by "
            "name, with them otherwise; an export: as it was trained)",
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
        "generation": Option(
            "reference",
            True,
            "a released model's decoding: reference (crimson-score's hf backend: the model's generation_config.json "
            "passed whole, else greedy up to 8,192 new tokens) or greedy (always the latter)",
            type=str,
            choices=("reference", "greedy"),
        ),
        "batch_size": Option(
            1,
            False,
            "pairs per generate call of a model loaded here (1: the reference's evaluate)",
            type=int,
            minimum=1,
        ),
        "max_new_tokens": Option(
            2048,
            True,
            "new-token limit of an export's answers (the released model generates with the reference's settings)",
            type=int,
            minimum=1,
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
    citation = """@article{baharoon2026crimson, title={CRIMSON: A Clinically-Grounded LLM-Based Metric for Generative \
Radiology Report Evaluation},
  author={Baharoon, Mohammed and Heintz, Thibault and Raissi, Siavash and Alabbad, Mahmoud and Alhammad, Mona and \
AlOmaish, Hassan and Kim, Sung Eun and Banerjee, Oishi and Rajpurkar, Pranav},
  journal={arXiv preprint arXiv:2603.06183}, year={2026}}"""
    judged_by_llm = True
    accepts_context = True
    requires_components = ("crimson",)
    endpoint_replaces_components = True

    def __init__(self, components=None, upstream=None, **options):
        super().__init__(components, upstream, **options)
        # the variant this run prompts with, resolved once, so the signature pins it
        self.options["guidelines"] = resolved_guidelines(self.options["guidelines"], self.components)

    @classmethod
    def check_setup(cls, options, components, endpoint):
        """The component is found (a missing released model is one line naming how to fetch it) and, for an export,
        the guidelines it was trained with are the ones asked for; read from the manifest alone."""
        if "crimson" not in components:
            return
        source = crimson_source(components["crimson"])
        if source[0] == "export":
            trained = source[2]["guidelines"]
            if options["guidelines"] not in (None, trained):
                raise OptionError(
                    f"metric crimson option guidelines={options['guidelines']}: the export {source[1]} was trained "
                    f"with guidelines={trained}, which scoring uses: leave guidelines unset"
                )

    @classmethod
    def display_detail(cls, detail):
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

    def signature_parts(self) -> list[str]:
        """The options that apply to who answers: the decoding options for a model loaded here, the request options
        for an endpoint."""
        if "crimson" in self.components:
            kind = crimson_source(self.components["crimson"])[0]
            unused = {"request", "max_reprompts", "max_new_tokens" if kind == "released" else "generation"}
        else:
            unused = {"generation", "max_new_tokens"}
        return [part for part in super().signature_parts() if part.split(":", 1)[0] not in unused]

    def runtime_part(self) -> str | None:
        """The released model runs in bfloat16, as the reference runs it."""
        part = super().runtime_part()
        if (
            part is not None
            and "crimson" in self.components
            and crimson_source(self.components["crimson"])[0] == "released"
        ):
            return part.rsplit("-", 1)[0] + "-bf16"
        return part

    def _answers(self, conversations: list[list[dict]]) -> tuple[list[tuple], dict]:
        """((answer text, (evaluation, score) or None, error or None) per pair, run meta): from the component loaded
        here, else through the LLM engine."""
        progress = self.options.get("progress", True)
        if "crimson" in self.components:
            kind, directory, _ = crimson_source(self.components["crimson"])
            batch_size = self.options["batch_size"]
            if kind == "released":
                generation = self.options["generation"]
                model = self.loaded(
                    "released",
                    lambda: ReleasedCrimson(directory, batch_size, generation),
                    directory,
                    batch_size,
                    generation,
                )
                texts = model.answers(conversations, progress)
                meta = {"generation": {k: str(v) for k, v in model.generation_kwargs().items()}}
            else:
                model, tokenizer = self.loaded("export", lambda: load_causal_lm(directory, min_vocab=50), directory)
                texts = export_answers(
                    model, tokenizer, conversations, self.options["max_new_tokens"], batch_size, progress
                )
                meta = {"generation": {"greedy": True, "max_new_tokens": self.options["max_new_tokens"]}}
            answers = []
            for text in texts:
                try:
                    answers.append((text, evaluate_answer(text), None))
                except CrimsonParseError as exc:
                    answers.append((text, None, str(exc)))
            return answers, meta

        engine = self.llm_engine(self.options["max_reprompts"])
        if self.options["request"] == "reference":
            engine.generation = dict(REFERENCE_REQUEST)
        tasks = [LLMTask(f"crimson-{i}", c, evaluate_answer) for i, c in enumerate(conversations)]
        results = engine.run(tasks)
        return [(r.text, r.parsed if r.ok else None, None if r.ok else r.error) for r in results], {
            "llm": engine.summary()
        }

    def compute(self, references, candidates, context=None):
        contexts = context if context is not None else [None] * len(references)
        guidelines, system = self.options["guidelines"], True
        if "crimson" in self.components:  # an export is prompted as it was trained
            kind, _, trained = crimson_source(self.components["crimson"])
            system = trained["system_message"] if kind == "export" else True
        conversations = [
            crimson_messages(r, c, patient, guidelines, system)
            for r, c, patient in zip(references, candidates, contexts)
        ]
        answers, meta = self._answers(conversations)
        values = {key: [] for key in self.keys}
        details = []
        for text, parsed, error in answers:
            if parsed is None:
                for key in self.keys:
                    values[key].append(float("nan"))
                details.append({"response": text, "error": error})
                continue
            evaluation, scored = parsed
            values["crimson"].append(float(scored["crimson_score"]))
            for key in COUNTS:
                values[f"crimson_{key}"].append(float(scored["error_counts"][key]))
                values[f"crimson_weighted_{key}"].append(float(scored["weighted_error_counts"][key]))
            values["crimson_matched_findings"].append(float(scored["matched_findings"]))
            details.append({"evaluation": evaluation, **{k: v for k, v in scored.items() if k != "matched_findings"}})
        return MetricOutput(values, details=details, meta=meta)


@lru_cache(maxsize=32)
def crimson_source(component: str) -> tuple[str, str, dict | None]:
    """("released" or "export", local directory, how an export was prompted in training: {"guidelines",
    "system_message"}): found offline-first, a missing released model one line naming how to fetch it. Reads no
    weights; looked up once per process (the checks, the signature and the run all ask, and a catalogue name would
    otherwise ask the Hub each time)."""
    local = fetch(component)
    if identify("crimson", local) == "export":
        directory, manifest = load_manifest(local, "crimson")
        config = manifest.get("training_config", {})
        trained = {key: bool(config.get(key, False)) for key in ("guidelines", "system_message")}
        return "export", str(directory), trained
    return "released", str(local), None


def resolved_guidelines(given: bool | None, components: dict) -> bool:
    """The guideline sections this run prompts with. Unset: the reference's rule (`_build_evaluation_prompt`) drops
    them for its released model named by its Hub id, keeps them for any other model or endpoint, a local path of the
    same weights included; an export uses what it was trained with."""
    if given is not None:
        return given
    if "crimson" not in components:
        return True
    component = str(components["crimson"])

    if component == RELEASED_MODEL or (component in ARTEFACTS and ARTEFACTS[component].repo_id == RELEASED_MODEL):
        return False
    kind, _, trained = crimson_source(component)
    return trained["guidelines"] if kind == "export" else True
