"""RadFact (Bannur et al. 2024, MAIRA-2; reference implementation microsoft/RadFact @ 72463ac, seed 004).

Reproduced from the reference:
- narrative reports are first turned into phrases by an LLM (report-to-phrases, few-shot); grounded reports
  (a list of {"text", "boxes"}) are used as they are;
- entailment verification one phrase at a time, in both directions: each candidate phrase against all reference
  phrases (precision side) and each reference phrase against all candidate phrases (recall side), binary
  (entailment / not entailment) with evidence phrases, few-shot with the reference's examples converted to
  single-phrase queries (`radfact.llm_utils.nli.processor.get_ev_processor_singlephrase`);
- spatial entailment (`metric/radfact.py`, `metric/box_metrics.py`): a boxed phrase is spatially entailed when it
  is logically entailed and strictly more than half of its box pixels lie inside the union of its evidence
  phrases' boxes, on a 224x224 grid whose pixel indices are the normalised coordinates times 224, truncated;
- per sample: logical precision / recall = entailed fraction of candidate / reference phrases; grounding
  precision / recall = spatially entailed fraction of the entailed boxed phrases; spatial precision / recall =
  spatially entailed fraction of all boxed phrases (NaN where a denominator is 0);
- corpus: the mean of each per-sample value (NaN left out) and F1 of the two means (`RadFactScore.from_aggregate`).

Departure: where the reference turns an LLM failure into "not entailed" and scores the sample, here the sample
is reported as not scored (NaN, with the error in the details) and counted by the engine.
The instructions are written for radmetrics; the few-shot examples are the reference's, bundled unmodified.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ...llm.engine import json_object_text

GRID = 224
BOX_PRECISION_THRESHOLD = 0.5
ENTAILMENT, NOT_ENTAILMENT = "entailment", "not_entailment"

PHRASES_INSTRUCTIONS = (
    "You prepare chest X-ray reports for fact checking. Rewrite the report as a list of short statements, each "
    "about one thing that can be seen on the image or confirmed to be absent: a finding, a device, an anatomical "
    "structure, or a change since a prior image. A sentence that describes several findings becomes several "
    "statements; two sentences that only make sense together become one. Leave out speculation about causes or "
    "diagnoses, recommendations, and remarks on image quality or technique. Keep the report's wording where you "
    'can. Answer with one JSON object, {"phrases": ["...", ...]}, and nothing else.'
)
NLI_INSTRUCTIONS = (
    "You check statements about a chest X-ray against another report of the same image. You receive the "
    'reference report as a list of phrases and one statement, the "hypothesis". Answer "entailment" when the '
    'reference supports everything the hypothesis states, and "not_entailment" when the reference contradicts '
    "it or does not say. For an entailment, list as evidence the reference phrases that support it, copied "
    'exactly. Answer with one JSON object, {"status": "entailment" or "not_entailment", "evidence": ["...", ...]}, '
    "and nothing else."
)


def _normalise(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _box_tuple(box) -> tuple[float, float, float, float]:
    if isinstance(box, dict):
        box = (box["x_min"], box["y_min"], box["x_max"], box["y_max"])
    x_min, y_min, x_max, y_max = (float(v) for v in box)
    if not (0 <= x_min <= x_max <= 1 and 0 <= y_min <= y_max <= 1):
        raise ValueError(f"box {box} is not normalised (0 <= min <= max <= 1)")
    return x_min, y_min, x_max, y_max


def box_mask(boxes, grid: int = GRID) -> np.ndarray:
    """Pixel mask of the union of normalised boxes on a grid x grid image (coordinates * grid, truncated)."""
    mask = np.zeros((grid, grid), dtype=bool)
    for box in boxes:
        x1, y1, x2, y2 = (int(v * grid) for v in _box_tuple(box))
        mask[y1:y2, x1:x2] = True
    return mask


def box_precision(candidate_boxes, evidence_boxes, grid: int = GRID) -> float:
    """Share of the candidate boxes' pixels inside the union of the evidence boxes (NaN for an empty candidate)."""
    candidate = box_mask(candidate_boxes, grid)
    area = candidate.sum()
    if area == 0:
        return float("nan")
    return float((candidate & box_mask(evidence_boxes, grid)).sum() / area)


@dataclass
class Phrase:
    text: str
    boxes: list | None = None


@dataclass
class EvidencedPhrase:
    text: str
    boxes: list | None
    entailed: bool
    evidence: list[int] = field(default_factory=list)  # indices into the other side's phrases
    spatially_entailed: bool | None = None  # None: the phrase has no boxes


def grounded_phrases(report: list) -> list[Phrase]:
    """A grounded report ([{"text": ..., "boxes": [...] or None}, ...]) as phrases; boxes are checked."""
    phrases = []
    for i, item in enumerate(report):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError(f"grounded report item {i} is not an object with a text: {item!r}")
        boxes = item.get("boxes") or None
        phrases.append(Phrase(item["text"], [_box_tuple(b) for b in boxes] if boxes else None))
    return phrases


def _few_shot(name: str) -> list:
    return json.loads(
        resources.files("radmetrics.inference").joinpath("resources", "radfact", name).read_text(encoding="utf-8")
    )


def phrases_messages(report: str) -> list[dict]:
    messages = [{"role": "system", "content": PHRASES_INSTRUCTIONS}]
    for example in _few_shot("report_to_phrases_few_shot_examples.json"):
        phrases = [p for sentence in example["parsed_report"]["sentence_list"] for p in sentence["new"]]
        messages += [
            {"role": "user", "content": example["findings_text"]},
            {"role": "assistant", "content": json.dumps({"phrases": phrases})},
        ]
    return [*messages, {"role": "user", "content": report}]


def parse_phrases(text: str) -> list[str]:
    """Validate a report-to-phrases answer: {"phrases": [non-empty strings]}."""
    answer = _json_answer(text)
    phrases = answer.get("phrases") if isinstance(answer, dict) else None
    if not isinstance(phrases, list) or not all(isinstance(p, str) and p.strip() for p in phrases):
        raise ValueError('expected {"phrases": ["...", ...]} with non-empty strings')
    return [" ".join(p.split()) for p in phrases]


def _nli_query(reference: list[str], hypothesis: str) -> str:
    return json.dumps({"reference": reference, "hypothesis": hypothesis})


def nli_messages(reference: list[str], hypothesis: str, max_shots: int | None = None) -> list[dict]:
    """Instructions, the reference's few-shot examples as single-phrase queries (both directions), this query."""
    messages = [{"role": "system", "content": NLI_INSTRUCTIONS}]
    shots = 0
    for example in _few_shot("nli_few_shot_examples.json"):
        sides = (
            ("phrases_A_evidenced", example["input"]["phrases_B"]),
            ("phrases_B_evidenced", example["input"]["phrases_A"]),
        )
        for key, premise in sides:
            for item in example["output"][key]:
                if max_shots is not None and shots >= max_shots:
                    break
                entailed = item["status"] == ENTAILMENT
                answer = {
                    "status": ENTAILMENT if entailed else NOT_ENTAILMENT,
                    "evidence": item["evidence"] if entailed else [],
                }
                messages += [
                    {"role": "user", "content": _nli_query(premise, item["phrase"])},
                    {"role": "assistant", "content": json.dumps(answer)},
                ]
                shots += 1
    return [*messages, {"role": "user", "content": _nli_query(reference, hypothesis)}]


def _json_answer(text: str):
    try:
        return json.loads(json_object_text(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the answer is not valid JSON ({exc})") from exc


def parse_entailment(text: str, reference: list[str]) -> tuple[bool, list[int]]:
    """Validate an entailment answer; evidence must quote reference phrases. Returns (entailed, evidence indices)."""
    answer = _json_answer(text)
    status = answer.get("status") if isinstance(answer, dict) else None
    if status not in (ENTAILMENT, NOT_ENTAILMENT):
        raise ValueError(f'"status" must be "{ENTAILMENT}" or "{NOT_ENTAILMENT}", got {status!r}')
    if status == NOT_ENTAILMENT:
        return False, []
    evidence = answer.get("evidence", [])
    if not isinstance(evidence, list):
        raise ValueError('"evidence" must be a list of reference phrases')
    index = {_normalise(p): i for i, p in enumerate(reference)}
    unknown = [e for e in evidence if _normalise(e) not in index]
    if unknown:
        raise ValueError(f"evidence {unknown[:2]} is not among the reference phrases; quote them exactly")
    return True, sorted({index[_normalise(e)] for e in evidence})


def spatially_entailed(
    phrase: EvidencedPhrase, premise: list[Phrase], threshold: float = BOX_PRECISION_THRESHOLD
) -> bool | None:
    if not phrase.boxes:
        return None
    evidence_boxes = [b for i in phrase.evidence for b in premise[i].boxes or []]
    if not phrase.entailed or not evidence_boxes:
        return False
    return box_precision(phrase.boxes, evidence_boxes) > threshold


def _fraction(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def one_way_scores(phrases: list[EvidencedPhrase]) -> tuple[float, float, float]:
    """(logical, grounding, spatial) fractions of one side (`compute_radfact_score_oneway`)."""
    entailed = [p for p in phrases if p.entailed]
    boxed = [p for p in phrases if p.spatially_entailed is not None]
    entailed_boxed = [p for p in boxed if p.entailed]
    both = [p for p in boxed if p.spatially_entailed]
    return (
        _fraction(len(entailed), len(phrases)),
        _fraction(len(both), len(entailed_boxed)),
        _fraction(len(both), len(boxed)),
    )


def f1(precision: float, recall: float) -> float:
    if np.isnan(precision) or np.isnan(recall):
        return float("nan")
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
