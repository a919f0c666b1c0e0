"""The semantic GREEN teacher as a metric: GREEN's score and counts (Ostmeier et al. 2024, section 3.2) from sentence
matching and word rules (teacher.py), with no LLM and no trained model.

Keys mirror GREEN's: `semantic_green` (matched / (matched + significant errors), 0 when nothing matched), and the
per-pair counts of significant errors, insignificant errors and matched findings; `semantic_green_precision` and
`_recall` are the matched findings over the candidate's and over the reference's statements (0 for a report with none).
The per-pair detail lists both
reports' statements, which matched which (with the cosine), and every error with its category, significance and
reason; report.html shows them. On RadPref's development half, minus the significant error count agrees with three
radiologists at Kendall tau-b 0.731 (ROUGE-L: 0.447); `radmetrics meta-eval radpref` measures it.
"""

from __future__ import annotations

from ..base import Metric, MetricOutput, Option
from .teacher import THRESHOLD, Rules, SemanticTeacher

PREFIX = "semantic_green"


class SemanticGreen(Metric):
    name = PREFIX
    options = {
        "threshold": Option(
            THRESHOLD,
            True,
            "the cosine below which two statements do not match (chosen on RadPref dev)",
            type=float,
            minimum=0,
            maximum=1,
        ),
        "encoder": Option(
            "default", True, "the sentence encoder (default: the bundled all-MiniLM-L6-v2)", True, type=str
        ),
        "batch_size": Option(64, False, "statements per encoder forward", type=int, minimum=1),
    }
    keys = (
        PREFIX,
        f"{PREFIX}_significant_errors",
        f"{PREFIX}_insignificant_errors",
        f"{PREFIX}_matched_findings",
        f"{PREFIX}_precision",
        f"{PREFIX}_recall",
    )
    higher_is_better = {
        PREFIX: True,
        f"{PREFIX}_significant_errors": False,
        f"{PREFIX}_insignificant_errors": False,
        f"{PREFIX}_matched_findings": True,
        f"{PREFIX}_precision": True,
        f"{PREFIX}_recall": True,
    }
    reference = (
        "GREEN's categories and score (Ostmeier et al. 2024, sections 3.1-3.2) by radmetrics' semantic teacher: "
        "one-to-one sentence matching and word rules chosen on RadPref's development half"
    )
    citation = """@inproceedings{ostmeier2024green, title={GREEN: Generative Radiology Report Evaluation and Error \
Notation},
  author={Ostmeier, Sophie and others}, booktitle={Findings of EMNLP}, year={2024}}"""
    runs_encoder = True

    def teacher(self) -> SemanticTeacher:
        from ...models.text_encoder import TextEncoder

        encoder = self.loaded("encoder", lambda: TextEncoder(self.options["encoder"]), self.options["encoder"])
        return SemanticTeacher(encoder, Rules(threshold=float(self.options["threshold"])), self.options["batch_size"])

    def compute(self, references, candidates):
        annotations = self.teacher()(references, candidates, progress=self.options.get("progress", False))
        values = {
            PREFIX: [a.score for a in annotations],
            f"{PREFIX}_significant_errors": [float(sum(a.significant)) for a in annotations],
            f"{PREFIX}_insignificant_errors": [float(sum(a.insignificant)) for a in annotations],
            f"{PREFIX}_matched_findings": [float(a.matched) for a in annotations],
            f"{PREFIX}_precision": [a.precision for a in annotations],
            f"{PREFIX}_recall": [a.recall for a in annotations],
        }
        return MetricOutput(values, details=[a.to_dict() for a in annotations])

    @classmethod
    def display_detail(cls, detail):
        from ..display import table
        from ..green.metric import green_display

        ref, cand = detail.get("reference_statements", []), detail.get("candidate_statements", [])

        def statement(items, index, side):
            return "" if index is None else f"{side}{index + 1}: {items[index]}"

        matches = [
            [statement(cand, c, "C"), statement(ref, r, "R"), similarity]
            for r, c, similarity in detail.get("matches", [])
        ]
        errors = [
            [
                f"({e['category']})",
                "significant" if e["significant"] else "insignificant",
                statement(cand, e["candidate"], "C"),
                statement(ref, e["reference"], "R"),
                e["reason"],
            ]
            for e in detail.get("errors", [])
        ]
        shown = green_display(detail.get("significant"), detail.get("insignificant"), detail.get("matched"), [])
        shown["tables"] += [
            table(
                "errors, statement by statement", ["category", "significance", "candidate", "reference", "why"], errors
            ),
            table("matched findings", ["candidate", "reference", "cosine"], matches),
        ]
        return shown
