"""The clinical ranking suite: does a metric order candidate reports as a radiologist would, on hard cases?

Each case is a reference and 2-4 candidates listed from best to worst (`resources/clinical_ranking/suite.jsonl`,
written by radmetrics' developers: 85 cases in 16 categories, laterality, severity, negation, uncertainty, interval
change, device position, an urgent against a benign omission or false finding, paraphrase, a normal template against a
specific report, and attribute errors of a finding otherwise right: measurement, device tip position, certainty,
specificity, location within an organ, and partial credit). A metric (oriented so that higher is better) is scored on
every (reference, candidate) pair; per case, each ordered pair of candidates (i before j in the expected order) is
concordant when the metric scores i higher, and a tie counts half. Reported per category and over all cases: pairwise
accuracy (concordant pairs over all ordered pairs) and the share of cases ordered exactly right (no tie, no inversion).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import numpy as np

from ..scoring.stats import ratio_of_sums_interval

SUITE_FILE = "suite.jsonl"
# The categories issue 61 added: attribute errors within a matched finding, which a finding-pair judge decides.
JUDGE_CATEGORIES = (
    "measurement",
    "device_tip_position",
    "certainty",
    "specificity",
    "location_within_organ",
    "partial_credit",
)


class SuiteError(ValueError):
    pass


@dataclass(frozen=True)
class RankingCase:
    id: str
    category: str
    reference: str
    candidates: tuple[str, ...]  # best first
    why: str = ""


def default_suite() -> Path:
    return Path(str(files("radmetrics.inference").joinpath("resources", "clinical_ranking", SUITE_FILE)))


def load_suite(path: str | Path | None = None) -> list[RankingCase]:
    """The cases of a suite file (JSONL: id, category, reference, candidates best first, why); SuiteError naming the
    line for a malformed one."""
    path = Path(path) if path else default_suite()
    cases, seen = [], set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: not a readable UTF-8 file ({exc})") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SuiteError(f"{path}: line {number} is not JSON ({exc.msg})") from None
        candidates = row.get("candidates")
        if not (isinstance(candidates, list) and 2 <= len(candidates) and all(isinstance(c, str) for c in candidates)):
            raise SuiteError(f"{path}: line {number}: candidates must be a list of at least 2 texts, best first")
        for field in ("id", "category", "reference"):
            if not isinstance(row.get(field), str) or not row[field].strip():
                raise SuiteError(f"{path}: line {number}: {field} must be a non-empty text")
        if row["id"] in seen:
            raise SuiteError(f"{path}: line {number}: id {row['id']!r} is used twice")
        seen.add(row["id"])
        cases.append(RankingCase(row["id"], row["category"], row["reference"], tuple(candidates), row.get("why", "")))
    if not cases:
        raise SuiteError(f"{path}: no cases")
    return cases


def pairs(cases: list[RankingCase]) -> tuple[list[str], list[str], list[str]]:
    """(references, candidates, ids) of every (reference, candidate) pair of the suite, case by case."""
    references, candidates, ids = [], [], []
    for case in cases:
        for rank, text in enumerate(case.candidates, 1):
            references.append(case.reference)
            candidates.append(text)
            ids.append(f"{case.id} #{rank}")
    return references, candidates, ids


def case_order(values: list[float]) -> tuple[float, int, bool]:
    """(concordant credit, ordered pairs, exactly ordered) of one case's values, listed best first (higher = better);
    a tie is half credit, and a value that is missing (NaN) makes its pairs wrong."""
    credit, total, exact = 0.0, 0, True
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            total += 1
            a, b = values[i], values[j]
            if a != a or b != b:  # NaN: not scored
                exact = False
            elif a > b:
                credit += 1.0
            elif a == b:
                credit += 0.5
                exact = False
            else:
                exact = False
    return credit, total, exact


def case_rows(cases: list[RankingCase], values: list[float]) -> list[dict]:
    """Each case's values (in `pairs` order), concordant credit, ordered pairs and whether it is ordered exactly."""
    start, rows = 0, []
    for case in cases:
        case_values = [float(v) for v in values[start : start + len(case.candidates)]]
        start += len(case.candidates)
        credit, total, exact = case_order(case_values)
        rows.append(
            {
                "id": case.id,
                "category": case.category,
                "values": case_values,
                "credit": credit,
                "pairs": total,
                "exact": exact,
            }
        )
    return rows


def accuracy_interval(rows: list[dict], n_resamples: int, seed: int) -> list[float]:
    """95% percentile interval of the pairwise accuracy of `rows` over resamples of its cases (with replacement). The
    same seed draws the same cases for every key, so two keys' intervals come from the same resamples."""
    credit = np.array([r["credit"] for r in rows], dtype=float)
    pairs_ = np.array([r["pairs"] for r in rows], dtype=float)
    return ratio_of_sums_interval(credit, pairs_, n_resamples, seed)


def summary(rows: list[dict], n_bootstrap: int = 0, seed: int = 0) -> dict:
    """Pairwise accuracy, exact order, cases and pairs of `rows`; with n_bootstrap, the accuracy's case-bootstrap
    `ci95`."""
    total = sum(r["pairs"] for r in rows)
    result = {
        "pairwise_accuracy": sum(r["credit"] for r in rows) / total if total else float("nan"),
        "exact_order": sum(r["exact"] for r in rows) / len(rows) if rows else float("nan"),
        "cases": len(rows),
        "pairs": total,
    }
    if n_bootstrap and total:
        result["ci95"] = accuracy_interval(rows, n_bootstrap, seed)
    return result


def ranking_report(
    cases: list[RankingCase], oriented: dict[str, list[float]], n_bootstrap: int = 0, seed: int = 0
) -> dict:
    """Per key: {"all": {...}, "categories": {category: {...}}}, each {"pairwise_accuracy", "exact_order", "cases",
    "pairs"} (and "ci95", resampling cases, when n_bootstrap > 0), and per case its values, from `oriented` (key ->
    per-pair values, higher = better, in `pairs` order)."""
    categories = sorted({case.category for case in cases})
    report = {}
    for key, values in oriented.items():
        per_case = case_rows(cases, values)
        report[key] = {
            "all": summary(per_case, n_bootstrap, seed),
            "categories": {
                c: summary([r for r in per_case if r["category"] == c], n_bootstrap, seed) for c in categories
            },
            "cases": per_case,
        }
    return report


def ranking_table(report: dict, categories: list[str] | None = None) -> str:
    """Markdown: one row per key, pairwise accuracy over all cases (its interval when measured; exact order) and per
    category."""
    keys = list(report)
    if not keys:
        return "(no keys)"
    categories = categories or list(report[keys[0]]["categories"])
    header = "| key | all (exact order) | " + " | ".join(categories) + " |"
    lines = [header, "|" + "---|" * (len(categories) + 2)]
    for key in sorted(keys, key=lambda k: -report[k]["all"]["pairwise_accuracy"]):
        entry = report[key]
        cells = [f"{entry['categories'][c]['pairwise_accuracy']:.2f}" for c in categories]
        everything = entry["all"]
        interval = " [{:.3f}, {:.3f}]".format(*everything["ci95"]) if "ci95" in everything else ""
        lines.append(
            f"| {key} | {everything['pairwise_accuracy']:.3f}{interval} ({everything['exact_order']:.2f}) | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)
