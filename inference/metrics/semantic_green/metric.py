"""The semantic GREEN teacher as a metric: GREEN's score and counts (Ostmeier et al. 2024, section 3.2) from the
findings of both reports, matched one to one by sentence embeddings and judged by word rules (teacher.py); no LLM.

Option `findings` says what is matched:
- `extractor` (the default): each report's findings as the findings extractor lists them (inference/findings/: a
  head radmetrics trains over the bundled MiniLM; the shipped export, or a `findings_extractor` export given with
  --components; the signature names which). Abbreviations are read as words first ("Lt" left, "PTX" pneumothorax,
  "ETT" endotracheal tube); a statement in a script the extractor was not trained on (no Latin letter) is kept as a
  finding, and is significant when unmatched unless it is normal; a matched pair whose interval change words disagree
  ("increased" against "decreased") is a significant (e) error. The judge's rules are otherwise the statements' (an
  unmatched finding is significant when it names an abnormality; chosen on radpref_dev's 30 development cases);
- `statements`: every statement of both reports, as before findings-first (the same values on every report in Latin
  script): an unmatched statement is significant only when it names an abnormality in the entity lexicon.

Keys mirror GREEN's: `semantic_green` (matched / (matched + significant errors), 0 when nothing matched, 1 when neither
report has a finding), and the per-pair counts of significant errors, insignificant errors and matched findings;
`semantic_green_weighted_errors` weighs each error as CRIMSON does (an error on a finding by the finding's clinical
significance, inference/findings/significance.py: urgent 1, actionable 0.5, not actionable 0.25, benign 0; a
significant attribute error of a matched pair, location, severity or interval change, 0.5; an insignificant error 0),
and `semantic_green_weighted` is matched / (matched + weighted errors), 1 when that is 0 / 0 (the only errors are on
benign findings, or there are none). Each pair's patient context (its age) informs the significance;
`semantic_green_precision` and `_recall` are the matched findings over the candidate's and over the reference's
findings (0 for a report with none, also where neither report has one and `semantic_green` is 1: report.html
says so beside such a pair, NO_FINDINGS_NOTE; the committed agreement results were measured with this convention).
The per-pair detail lists both reports' findings, which matched which (with the cosine), and every error with its
category, significance and reason; report.html shows them.
`radmetrics meta-eval radpref` and `meta-eval findings` measure agreement with RadPref's radiologists.
"""

from __future__ import annotations

from ...findings.extractor import COMPONENT, FindingsExtractor, FindingsHead, MemoEncoder, shipped_extractor
from ...findings.judge_labels import parse_label
from ...findings.pair_features import read_as_diagnoses
from ...findings.significance import significance, weight
from ...loading.checkpoint import load_manifest
from ...loading.fingerprints import fingerprint
from ...models.text_encoder import TextEncoder
from ...text.sentences import statements
from ..base import Metric, MetricOutput, Option
from ..display import table
from ..shared.green_display import green_display
from .judge import SCOPES, annotate_with_judge, load_judge, shipped_judge
from .teacher import THRESHOLD, Rules, SemanticTeacher

PREFIX = "semantic_green"
# judge_significance's choices: the modes of Rules.significance that judge=model offers
SIGNIFICANCE_MODES = ("lexicon", "terms")
NO_FINDINGS_NOTE = (
    "neither report has a finding: semantic_green is 1 (a normal report against a normal report), while "
    "semantic_green_precision and semantic_green_recall are 0 (no findings to match)"
)


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
        "findings": Option(
            "extractor",
            True,
            "extractor (the findings the trained findings extractor lists) or statements (every statement, as before)",
            type=str,
            choices=("extractor", "statements"),
        ),
        "judge": Option(
            "rules",
            True,
            "who decides a matched pair of findings: rules (the word rules) or model (the finding-pair judge "
            "radmetrics ships, or a finding_judge export given with --components: attribute errors, which attribute "
            "and whether significant, contradictions, unrelated pairs)",
            type=str,
            choices=("rules", "model"),
        ),
        "judge_threshold": Option(
            0.4,
            True,
            "with judge=model: the judge decides a matched pair only where its most probable label has a probability "
            "above this (and is one judge_scope lets through); elsewhere the rules decide. 0.4 is what case-level "
            "cross-validation on radpref_dev chose for the shipped judge (docs/notes/finding-judge.md); 1.0 lets it "
            "decide nowhere",
            type=float,
            minimum=0.0,
            maximum=1.0,
        ),
        "judge_scope": Option(
            "matched",
            True,
            "with judge=model: matched (the judge decides a pair it calls the same or the same with an attribute "
            "error, which attribute and whether significant; contradictions and unrelated pairs stay the rules'), "
            "attributes (attribute errors only), rule_blind (only the attributes the rules cannot see: measurement, "
            "device position, certainty, specificity) or all (any confident label)",
            type=str,
            choices=SCOPES,
        ),
        "judge_significance": Option(
            "lexicon",
            True,
            "with judge=model: when an unmatched finding is a significant error: lexicon (it names an abnormality the "
            "entity lexicon knows, as judge=rules decides) or terms (that, or it names a term of the clinical-"
            "significance rules, findings/significance.py: airspace disease, osteopenia, a port, a drain, which the "
            "lexicon misses). On radpref_dev terms agrees better with the raters' error counts and worse with their "
            "ratings (docs/notes/finding-judge.md)",
            type=str,
            choices=SIGNIFICANCE_MODES,
        ),
    }
    keys = (
        PREFIX,
        f"{PREFIX}_weighted",
        f"{PREFIX}_weighted_errors",
        f"{PREFIX}_significant_errors",
        f"{PREFIX}_insignificant_errors",
        f"{PREFIX}_matched_findings",
        f"{PREFIX}_precision",
        f"{PREFIX}_recall",
    )
    higher_is_better = {
        PREFIX: True,
        f"{PREFIX}_weighted": True,
        f"{PREFIX}_weighted_errors": False,
        f"{PREFIX}_significant_errors": False,
        f"{PREFIX}_insignificant_errors": False,
        f"{PREFIX}_matched_findings": True,
        f"{PREFIX}_precision": True,
        f"{PREFIX}_recall": True,
    }
    reference = (
        "GREEN's categories and score (Ostmeier et al. 2024, sections 3.1-3.2) by radmetrics' semantic teacher over "
        "each report's findings as radmetrics' findings extractor lists them (findings=statements: every statement): "
        "one-to-one sentence matching and word rules chosen on RadPref's development cases"
    )
    citation = """@inproceedings{ostmeier2024green, title={GREEN: Generative Radiology Report Evaluation and Error \
Notation},
  author={Ostmeier, Sophie and others}, booktitle={Findings of EMNLP}, year={2024}}"""
    runs_encoder = True
    accepts_context = True

    def encoder(self):
        return self.loaded("encoder", lambda: TextEncoder(self.options["encoder"]), self.options["encoder"])

    def teacher(self, encoder=None) -> SemanticTeacher:
        findings = self.options["findings"] == "extractor"
        model = self.options["judge"] == "model"
        rules_ = Rules(
            threshold=self.options["threshold"],
            significance=self.options["judge_significance"] if model else "lexicon",
            interval_change=findings,
            other_scripts_significant=findings,
        )
        # judge=model matches a synonym of a diagnosis to it ("enlarged cardiac silhouette", "cardiomegaly")
        read_as = read_as_diagnoses if model else None
        return SemanticTeacher(encoder or self.encoder(), rules_, self.options["batch_size"], read_as)

    def extractor_path(self) -> str:
        return str(self.components.get("findings_extractor") or shipped_extractor())

    def judge_path(self) -> str:
        """The finding_judge export given with --components, else the one radmetrics ships."""
        return str(self.components.get("finding_judge") or shipped_judge())

    def signature_parts(self) -> list[str]:
        parts = super().signature_parts()
        if self.options["judge"] == "rules":  # the judge's own settings change nothing the rules decide
            parts = [p for p in parts if not p.startswith(("judge_threshold:", "judge_scope:", "judge_significance:"))]
        if self.options["findings"] == "extractor":
            parts.append(f"extractor:{fingerprint(self.extractor_path())}")
        if self.options["judge"] == "model":
            parts.append(f"finding_judge:{fingerprint(self.judge_path())}")
        return parts

    def finding_judge(self):
        path = self.judge_path()
        return self.loaded("finding_judge", lambda: load_judge(path, self.options["batch_size"]), path)

    def annotate_lists(self, references, candidates, teacher) -> list:
        """The teacher's annotations of lists of statements or findings, matched pairs decided as `judge` says."""
        if self.options["judge"] == "model":
            threshold, scope = self.options["judge_threshold"], self.options["judge_scope"]
            return annotate_with_judge(teacher, self.finding_judge(), references, candidates, False, threshold, scope)
        return teacher.annotate_lists(references, candidates)

    def findings_lists(self, reports, encoder=None) -> list[list[str]]:
        """Each report's findings as the findings extractor lists them (abbreviations read as words first)."""
        path = self.extractor_path()
        head = self.loaded("extractor", lambda: FindingsHead.load(load_manifest(path, COMPONENT)[0]), path)
        encoder = encoder if encoder is not None else MemoEncoder(self.encoder())
        if head.encoder != self.options["encoder"]:  # the head reads its own encoder's embeddings
            own = self.loaded("extractor_encoder", lambda: TextEncoder(head.encoder), head.encoder)
            extractor = FindingsExtractor(head, MemoEncoder(own), self.options["batch_size"])
        else:
            extractor = FindingsExtractor(head, encoder, self.options["batch_size"])
        progress = self.options.get("progress", False)
        model = self.options["judge"] == "model"
        return extractor.of_reports(reports, progress, lobes=model, hedged=model)

    def annotate(self, references, candidates) -> list:
        """The teacher's annotation of each pair (`teacher.Annotation`): over the extracted findings, or over every
        statement with findings=statements. The annotation's statements are the items its errors and matches index."""
        progress = self.options.get("progress", False)
        if self.options["findings"] == "statements":
            if self.options["judge"] == "rules":
                return self.teacher()(references, candidates, progress=progress)
            split = [statements(r) for r in references], [statements(c) for c in candidates]
            return self.annotate_lists(*split, self.teacher())

        encoder = MemoEncoder(self.encoder())  # the extractor and the teacher embed each text once
        found = self.findings_lists([*references, *candidates], encoder)
        return self.annotate_lists(found[: len(references)], found[len(references) :], self.teacher(encoder))

    def compute(self, references, candidates, context=None):
        annotations = self.annotate(references, candidates)
        contexts = context if context is not None else [None] * len(annotations)
        weighted = [weighted_errors(a, c) for a, c in zip(annotations, contexts)]
        values = {
            PREFIX: [a.score for a in annotations],
            f"{PREFIX}_weighted": [weighted_score(a.matched, total) for a, (total, _) in zip(annotations, weighted)],
            f"{PREFIX}_weighted_errors": [total for total, _ in weighted],
            f"{PREFIX}_significant_errors": [float(sum(a.significant)) for a in annotations],
            f"{PREFIX}_insignificant_errors": [float(sum(a.insignificant)) for a in annotations],
            f"{PREFIX}_matched_findings": [float(a.matched) for a in annotations],
            f"{PREFIX}_precision": [a.precision for a in annotations],
            f"{PREFIX}_recall": [a.recall for a in annotations],
        }
        details = []
        for annotation, (total, levels) in zip(annotations, weighted):
            detail = annotation.to_dict()
            for error, (level, error_weight) in zip(detail["errors"], levels):
                error.update(level=level, weight=error_weight)
            details.append({**detail, "weighted_errors": total})
        return MetricOutput(values, details=details)

    @classmethod
    def display_detail(cls, detail):
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
                ("significant" if e["significant"] else "insignificant")
                + (f", {e['level']} ({e['weight']:g})" if e.get("level") else ""),
                statement(cand, e["candidate"], "C"),
                statement(ref, e["reference"], "R"),
                e["reason"],
            ]
            for e in detail.get("errors", [])
        ]
        shown = green_display(detail.get("significant"), detail.get("insignificant"), detail.get("matched"), [])
        if not ref and not cand:
            shown["notes"].append(NO_FINDINGS_NOTE)
        shown["tables"] += [
            table(
                "errors, statement by statement", ["category", "significance", "candidate", "reference", "why"], errors
            ),
            table("matched findings", ["candidate", "reference", "cosine"], matches),
        ]
        if detail.get("decisions"):
            shown["tables"].append(judge_table(detail, statement))
        return shown


def error_weight(error, annotation, context) -> tuple[str | None, float]:
    """(the clinical significance level weighed, CRIMSON's weight) of one teacher error: a false or missing finding (an
    unmatched statement, or one whose presence the other side negates) by its finding's level; a location, severity or
    interval-change error of a matched pair 0.5 when significant (CRIMSON's significant attribute error); an
    insignificant error (a normal statement, a comparison) 0."""
    if not error.significant:
        return None, 0.0
    both = error.candidate is not None and error.reference is not None
    if both and error.category in ("c", "d", "e"):
        return None, 0.5
    # the finding the error is about: the candidate's for a false finding (a), the reference's for a missing one (b)
    on_candidate = error.category == "a" if both else error.candidate is not None
    if on_candidate:
        statement = annotation.candidate_statements[error.candidate]
    else:
        statement = annotation.reference_statements[error.reference]
    level = significance(statement, context)
    return level, weight(level)


def weighted_errors(annotation, context) -> tuple[float, list[tuple[str | None, float]]]:
    levels = [error_weight(e, annotation, context) for e in annotation.errors]
    return float(sum(w for _, w in levels)), levels


def weighted_score(matched: int, weighted: float) -> float:
    return matched / (matched + weighted) if matched + weighted > 0 else 1.0


def judge_table(detail: dict, statement) -> dict:
    """The finding-pair judge's decision on each matched pair: same, an attribute error (which attribute, significant
    or not), a contradiction, unrelated."""
    ref, cand = detail.get("reference_statements", []), detail.get("candidate_statements", [])
    rows = []
    for r, c, label in detail["decisions"]:
        decision = parse_label(label)
        significance = (
            ""
            if decision.decision in ("same", "unrelated")
            else ("significant" if decision.significant else "insignificant")
        )
        rows.append(
            [statement(cand, c, "C"), statement(ref, r, "R"), decision.decision, decision.kind or "", significance]
        )
    columns = ["candidate", "reference", "decision", "attribute or kind", "significance"]
    return table("the finding-pair judge, matched pair by matched pair", columns, rows)
