"""Finding-level agreement with RadPref's radiologists: where `semantic_green` loses agreement, stage by stage.

RadPref lists each report's abnormal findings (`ground_truth_findings`, `C*_findings`) and its raters label, per
candidate finding, a false finding (`error_type: false`) and, per reference finding, a missing one. Three measures:

- **extraction**: an evaluator's findings of a report against the report's listed findings, one to one (the Hungarian
  assignment on the bundled MiniLM's cosine); a listed finding is recovered when its assigned finding has cosine >=
  0.6 (`RECOVERED_AT`). Precision, recall and F1 are pooled over every report (each reference once, each candidate);
- **the judge alone**, given the listed findings: the semantic teacher matches the two lists, and an unmatched (or
  polarity-flipped) candidate finding is judged false, an unmatched reference finding missing; against the raters'
  majority (2 of 3) by F1 and Cohen's kappa, beside each pair of raters (the ceiling);
- **report level**: Kendall tau-b of minus the significant error count against minus the raters' mean error count,
  three ways: every statement of the full reports judged (`semantic_green findings=statements`, as it ran before
  findings-first), the extracted findings judged (`semantic_green` as it runs now, abbreviations expanded first),
  the listed findings judged by the same judge; each with its case bootstrap interval and the paired difference
  against the statements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..findings.extractor import FindingsExtractor, FindingsHead
from ..scoring.stats import case_bootstrap_taus, case_resamples
from ..text import word_rules as rules
from ..text.sentences import expand_abbreviations, statements
from .radpref import Candidate, case_index

RECOVERED_AT = 0.6


def todays_findings(report: str) -> list[str]:
    """Today's statement filter: the report's statements that are not normal and name an abnormality (the semantic
    teacher's significance rule), each taken as one finding."""
    return [s for s in statements(report) if rules.is_significant_alone(s)]


def assignment(extracted: list[str], listed: list[str], vectors: dict[str, np.ndarray]) -> list[tuple[int, int]]:
    """(extracted index, listed index) of the one-to-one assignment whose pairs reach RECOVERED_AT."""
    from scipy.optimize import linear_sum_assignment

    if not extracted or not listed:
        return []
    similarity = np.stack([vectors[e] for e in extracted]) @ np.stack([vectors[t] for t in listed]).T
    rows, cols = linear_sum_assignment(-similarity)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if similarity[r, c] >= RECOVERED_AT]


def extraction_scores(extracted: Sequence[list[str]], listed: Sequence[list[str]], encoder) -> dict:
    """Pooled precision, recall and F1 of extracted findings against listed ones, report by report."""
    texts = sorted({t for items in (*extracted, *listed) for t in items})
    vectors = dict(zip(texts, encoder.encode(texts))) if texts else {}
    recovered = sum(len(assignment(e, t, vectors)) for e, t in zip(extracted, listed))
    n_extracted, n_listed = sum(map(len, extracted)), sum(map(len, listed))
    precision = recovered / n_extracted if n_extracted else float("nan")
    recall = recovered / n_listed if n_listed else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "extracted": n_extracted,
        "listed": n_listed,
        "recovered": recovered,
        "reports": len(listed),
    }


def judged_errors(annotation) -> tuple[set[int], set[int]]:
    """(candidate indices judged false, reference indices judged missing) of one teacher annotation."""
    false = {e.candidate for e in annotation.errors if e.category == "a" and e.candidate is not None}
    missing = {e.reference for e in annotation.errors if e.category == "b" and e.reference is not None}
    return false, missing


def rater_errors(label: dict) -> tuple[set[int], set[int]]:
    """(candidate finding indices a rater marked false, reference finding indices marked missing)."""
    false = {int(i) for i, e in (label.get("finding_errors") or {}).items() if e.get("error_type") == "false"}
    return false, {int(i) for i in (label.get("missing_findings") or {})}


def binary_agreement(predicted: Sequence[bool], gold: Sequence[bool]) -> dict:
    """F1 of the positive class and Cohen's kappa, with the counts."""
    p, g = np.asarray(predicted, dtype=bool), np.asarray(gold, dtype=bool)
    tp, fp, fn = int((p & g).sum()), int((p & ~g).sum()), int((~p & g).sum())
    n = len(p)
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")
    observed = float((p == g).mean()) if n else float("nan")
    expected = float(p.mean() * g.mean() + (1 - p.mean()) * (1 - g.mean())) if n else float("nan")
    kappa = (observed - expected) / (1 - expected) if n and expected < 1 else float("nan")
    return {"f1": f1, "kappa": kappa, "n": n, "positives": int(g.sum()), "predicted": int(p.sum())}


def finding_items(candidates: list[Candidate]) -> dict[str, list[tuple[int, int]]]:
    """The items the raters graded: ("false", (candidate number, candidate finding index)) for every listed candidate
    finding, ("missing", (candidate number, reference finding index)) for every listed reference finding."""
    return {
        "false": [(n, i) for n, c in enumerate(candidates) for i in range(len(c.findings))],
        "missing": [(n, i) for n, c in enumerate(candidates) for i in range(len(c.reference_findings))],
    }


def judge_agreement(candidates: list[Candidate], annotations: list) -> dict:
    """Per kind (false, missing): the judge against the raters' majority, and every pair of raters."""
    items = finding_items(candidates)
    raters = [[rater_errors(label) for label in c.labels] for c in candidates]
    judged = [judged_errors(a) for a in annotations]
    report = {}
    for kind, slot in (("false", 0), ("missing", 1)):
        votes = np.array([[i in raters[n][r][slot] for r in range(3)] for n, i in items[kind]], dtype=int)
        majority = votes.sum(1) >= 2
        predicted = [i in judged[n][slot] for n, i in items[kind]]
        pairs = {
            f"rater {a + 1} vs rater {b + 1}": binary_agreement(votes[:, a].astype(bool), votes[:, b].astype(bool))
            for a in range(3)
            for b in range(a + 1, 3)
        }
        report[kind] = {"judge_vs_majority": binary_agreement(predicted, majority), "raters": pairs}
    return report


def tau_three_ways(
    candidates: list[Candidate], counts: dict[str, np.ndarray], baseline: str, n_resamples: int, seed: int
) -> dict:
    """Tau-b of minus each way's error count against minus the raters' mean, with case-bootstrap intervals and the
    paired difference against `baseline`."""
    target = -np.array([c.mean_errors() for c in candidates])
    resamples = case_resamples(case_index(candidates), n_resamples, seed)
    return case_bootstrap_taus({way: -values for way, values in counts.items()}, target, resamples, baseline)


def findings_agreement(
    candidates: list[Candidate],
    statement_teacher,
    findings_teacher,
    encoder,
    extract: Callable[[list[str]], list[list[str]]],
    n_resamples: int = 1000,
    seed: int = 0,
    extended: bool = False,
) -> dict:
    """Extraction, the judge alone and report-level tau-b (module docstring), for one extractor. `statement_teacher`
    judges every statement (semantic_green before findings-first), `findings_teacher` judges findings lists as
    semantic_green does now; reports are read with their abbreviations expanded, as semantic_green reads them (with
    `extended`, as its judge=model reads them: lobes and the extended abbreviations too)."""
    references = list(dict.fromkeys((c.case_id, c.reference) for c in candidates))
    texts = [r for _, r in references] + [c.text for c in candidates]
    extracted = extract([expand_abbreviations(t, lobes=extended, extended=extended) for t in texts])
    by_reference = dict(zip(references, extracted[: len(references)]))
    extracted_refs = [by_reference[(c.case_id, c.reference)] for c in candidates]
    extracted_cands = extracted[len(references) :]
    listed_refs = {(c.case_id, c.reference): c.reference_findings for c in candidates}
    extraction = extraction_scores(
        [by_reference[r] for r in references] + extracted_cands,
        [listed_refs[r] for r in references] + [c.findings for c in candidates],
        encoder,
    )
    on_lists = findings_teacher.annotate_lists(
        [c.reference_findings for c in candidates], [c.findings for c in candidates]
    )
    on_extracted = findings_teacher.annotate_lists(extracted_refs, extracted_cands)
    full = statement_teacher([c.reference for c in candidates], [c.text for c in candidates])
    counts = {
        "statements": significant_counts(full),
        "extracted_findings": significant_counts(on_extracted),
        "listed_findings": significant_counts(on_lists),
    }
    return {
        "extraction": extraction,
        "judge_on_listed_findings": judge_agreement(candidates, on_lists),
        "report_tau_b": tau_three_ways(candidates, counts, "statements", n_resamples, seed),
        "candidates": len(candidates),
        "cases": len({c.case_id for c in candidates}),
    }


def significant_counts(annotations: list) -> np.ndarray:
    """Per pair, the significant error count (semantic_green_significant_errors)."""
    return np.array([sum(a.significant) for a in annotations], dtype=float)


def extractor_named(name: str, encoder) -> Callable[[list[str]], list[list[str]]]:
    """reports -> findings lists for `meta-eval findings --extractor`: rules (the statement filter), trained (the
    shipped export), an export, or a findings/classifier run directory (its final/ head)."""
    if name == "rules":
        return lambda texts: [todays_findings(t) for t in texts]
    if name == "trained":
        return FindingsExtractor.from_export(None, encoder)
    path = Path(name)
    if (path / "final" / "findings_head.json").is_file():
        return FindingsExtractor(FindingsHead.load(path / "final"), encoder)
    return FindingsExtractor.from_export(path, encoder)
