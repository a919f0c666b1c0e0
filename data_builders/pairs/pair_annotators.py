"""The teachers `radmetrics data annotate` runs, each as an annotator of a chunk of pairs: `items(pairs, start, end)`
gives the record-stream lines of pairs start..end-1 ({"i", "record"} or {"i", "failure"}), and `finish(...)` writes
what the teacher adds beside the split files and returns the run's summary."""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.inference.files.atomic import write_text


class SemanticAnnotator:
    """The semantic_green teacher (semantic_teacher.py): no LLM."""

    def __init__(self, encoder: str, quoted: bool, units: str):
        self.encoder, self.quoted, self.units = encoder, quoted, units

    def items(self, pairs: list[dict], start: int, end: int) -> list[dict]:
        from .semantic_teacher import semantic_annotations

        records = semantic_annotations(pairs[start:end], self.encoder, quoted=self.quoted, units=self.units)
        return [{"i": start + k, "record": record} for k, record in enumerate(records)]

    def finish(self, out: Path, records: list, failures: list, per_file: dict) -> dict:
        return {"written": len(records), "teacher": "semantic_green", "per_file": per_file}


class ProgrammaticCrimsonAnnotator:
    """CRIMSON answers from the edit logs of pairs built by `radmetrics data pairs` (crimson_programmatic.py)."""

    def items(self, pairs: list[dict], start: int, end: int) -> list[dict]:
        from radmetrics.inference.metrics.crimson.metric import evaluate_answer

        from .crimson_programmatic import programmatic_answer

        items = []
        for i in range(start, end):
            answer = programmatic_answer(pairs[i])
            score = evaluate_answer(answer)[1]["crimson_score"]
            record = {**pairs[i], "response": answer, "crimson_score": score, "teacher": "programmatic"}
            items.append({"i": i, "record": record})
        return items

    def finish(self, out: Path, records: list, failures: list, per_file: dict) -> dict:
        return {"written": len(records), "teacher": "programmatic", "per_file": per_file}


class LLMAnnotator:
    """An LLM teacher at an endpoint: GREEN's appendix A.1 prompt (llm_teacher.py) or CRIMSON's (crimson_teacher.py).
    Every answer is cached (`llm_cache`), so a chunk done again re-sends nothing answered."""

    def __init__(self, endpoint: str, llm_cache: Path, max_reprompts: int, answer_format: str):
        from radmetrics.inference.llm.endpoint import Endpoint
        from radmetrics.inference.llm.engine import LLMEngine

        self.engine = LLMEngine(Endpoint.from_yaml(endpoint), llm_cache, max_reprompts)
        self.format = answer_format

    def items(self, pairs: list[dict], start: int, end: int) -> list[dict]:
        from .crimson_teacher import annotate_crimson
        from .llm_teacher import annotate_pairs

        chunk = pairs[start:end]
        records, failures = (annotate_crimson if self.format == "crimson" else annotate_pairs)(chunk, self.engine)
        index = {pair["id"]: start + k for k, pair in enumerate(chunk)}
        items = [{"i": index[r["id"]], "record": r} for r in records]
        items += [{"i": index[f["id"]], "failure": f} for f in failures]
        return sorted(items, key=lambda item: item["i"])

    def finish(self, out: Path, records: list, failures: list, per_file: dict) -> dict:
        write_text(out / "failures.jsonl", "".join(json.dumps(failure) + "\n" for failure in failures))
        self.engine.write_manifest(out / "llm_manifest.json")
        totals = self.engine.totals.__dict__
        return {
            "written": len(records),
            "failed": len(failures),
            "per_file": per_file,
            "llm": {k: totals[k] for k in ("requests_sent", "cache_hits", "retries", "reprompts")},
        }


def annotator_for(teacher: str, request, out: Path):
    """The annotator of `teacher` (annotation_run.chosen_teacher) with the request's options."""
    if teacher == "semantic":
        return SemanticAnnotator(request.encoder, request.quoted, request.units)
    if teacher == "programmatic":
        return ProgrammaticCrimsonAnnotator()
    return LLMAnnotator(
        request.endpoint, request.llm_cache or out / "llm_cache.sqlite", request.max_reprompts, request.format
    )
