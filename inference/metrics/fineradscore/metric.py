"""FineRadScore (Huang et al., MLHC 2024; see judge.py beside it for what is reproduced).

Keys: `fineradscore_sum` (the paper's report score, section 7) and `fineradscore_max` (section 6.4); lower is
better. Details per pair: the numbered lines, every correction with its severity, comments and error
categories, and the corrected report. Options: `endpoint`, `llm_cache`, `max_reprompts` (default 5, the paper's),
`layout` ("gpt4", the authors' GPT-4 chat, default; "claude3", their Claude-3 chat).
"""

from __future__ import annotations

from ...llm.engine import LLMTask
from ..base import Metric, MetricOutput, Option
from ..display import cut, table
from .judge import (
    MAX_REPROMPTS,
    apply_corrections,
    candidate_lines,
    fineradscore_aggregate,
    fineradscore_messages,
    parse_corrections,
)


class FineRadScore(Metric):
    name = "fineradscore"
    options = {
        "max_reprompts": Option(
            MAX_REPROMPTS, True, "re-asks after an unparsable answer (the paper's 5)", type=int, minimum=0
        ),
        "layout": Option(
            "gpt4", True, "the authors' chat layout: gpt4 or claude3", type=str, choices=("gpt4", "claude3")
        ),
    }
    keys = ("fineradscore_sum", "fineradscore_max")
    higher_is_better = {"fineradscore_sum": False, "fineradscore_max": False}
    reference = (
        "FineRadScore (Huang et al., MLHC 2024; rajpurkarlab/FineRadScore prompt and line numbering, section 6.4"
        " severities)"
    )
    citation = """@inproceedings{huang2024fineradscore, title={FineRadScore: A Radiology Report Line-by-Line \
Evaluation Technique
  Generating Corrections with Severity Scores}, author={Huang, Alyssa and Banerjee, Oishi and Wu, Kay and Pontes \
Reis, Eduardo and
  Rajpurkar, Pranav}, booktitle={Machine Learning for Healthcare}, year={2024}}"""
    judged_by_llm = True

    @classmethod
    def display_detail(cls, detail):
        if not detail.get("corrections") and not detail.get("corrected_report"):
            return {"notes": ["no correction"]}
        rows = [
            [
                "inserted" if c.get("line") is None else c.get("line"),
                c.get("correction"),
                f"{c.get('severity')} ({c.get('score')})",
                c.get("comments"),
            ]
            for c in detail.get("corrections", [])
        ]
        return {
            "tables": [table("corrections", ["line", "correction", "severity", "comment"], rows)],
            "texts": [{"caption": "corrected report", "text": cut(detail.get("corrected_report", ""))}],
        }

    def compute(self, references, candidates):
        engine = self.llm_engine(self.options["max_reprompts"])
        lines_of = [candidate_lines(c) for c in candidates]
        layout = self.options["layout"]
        tasks = [
            LLMTask(
                f"fineradscore-{i}",
                fineradscore_messages(reference, candidate, layout),
                lambda text, n=len(lines): parse_corrections(text, n),
            )
            for i, (reference, candidate, lines) in enumerate(zip(references, candidates, lines_of))
        ]
        sums, maxima, details = [], [], []
        for candidate, lines, result in zip(candidates, lines_of, engine.run(tasks)):
            if not result.ok:
                sums.append(float("nan"))
                maxima.append(float("nan"))
                details.append({"lines": lines, "error": result.error})
                continue
            total, worst = fineradscore_aggregate(result.parsed)
            sums.append(float(total))
            maxima.append(float(worst))
            details.append(
                {
                    "lines": lines,
                    "corrections": [c.to_dict() for c in result.parsed],
                    "corrected_report": apply_corrections(candidate, result.parsed),
                    "reprompts": result.reprompts,
                }
            )
        return MetricOutput(
            {"fineradscore_sum": sums, "fineradscore_max": maxima}, details=details, meta={"llm": engine.summary()}
        )
