"""semantic_green's finding-pair judge against its word rules, side by side, in one results file with intervals.

1. The clinical ranking suite's open cases (inference/resources/clinical_ranking/suite.jsonl; never the sealed half):
   pairwise accuracy per category of `semantic_green_significant_errors`, `semantic_green` and
   `semantic_green_weighted`, judge=rules and judge=model, with case-bootstrap intervals.
2. radpref_dev, all 50 cases, given RadPref's listed findings (both reports' findings as the raters saw them): false,
   missing and attribute findings against the raters' majority (F1 and kappa), rules and judge, beside every pair of
   raters. An attribute finding is a candidate finding on a matched pair with a location, severity or interval-change
   (c, d, e) error; the raters' are their `attribute` errors.
3. radpref_dev, full reports (findings first, as semantic_green scores): report-level tau-b of minus the significant
   count and of `semantic_green_weighted`, against minus the raters' mean error count and against their mean 1-5
   rating, each with its case-bootstrap interval and the paired difference judge minus rules.

The judge runs at semantic_green's defaults (judge_threshold, judge_scope: chosen inside case-level cross-validation
on radpref_dev by finding_judge_threshold.py, whose held-out figures are the ones to quote for radpref); the figures
here are those defaults on all 50 cases. `--parts open2`, `open3` and `open4` score the other open sets
(open_2.jsonl ... open_4.jsonl, written by other engineers, read and developed against by the judge's author);
`--parts sealed` ... `sealed12` score the suite's sealed halves (written by someone other than
the judge's author), each once, at the end.

    python benchmarks/green/finding_judge.py --judge EXPORT --results benchmarks/results/finding_judge.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine  # noqa: E402

from radmetrics.inference.files.atomic import write_text  # noqa: E402
from radmetrics.inference.files.json_io import dumps  # noqa: E402
from radmetrics.inference.files.output_paths import check_output_file  # noqa: E402
from radmetrics.inference.loading.checkpoint import load_manifest  # noqa: E402
from radmetrics.inference.meta_evaluation.findings_agreement import binary_agreement, judged_errors, rater_errors  # noqa: E402
from radmetrics.inference.meta_evaluation.oriented import quality_oriented  # noqa: E402
from radmetrics.inference.meta_evaluation.radpref import agreement, case_index, load_radpref  # noqa: E402
from radmetrics.inference.meta_evaluation.ranking import default_suite, load_suite, pairs, ranking_report  # noqa: E402
from radmetrics.inference.scoring.scorer import Scorer  # noqa: E402
from radmetrics.inference.scoring.signature import fingerprint  # noqa: E402

KEYS = ("semantic_green_significant_errors", "semantic_green", "semantic_green_weighted")


def run_record(script: str, argv, judge: str) -> dict:
    """What every finding-judge results file opens with: the command, the commit, the machine and the judge."""
    commit = subprocess.check_output(["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"], text=True).strip()
    return {
        "command": f"python benchmarks/green/{script} " + " ".join(argv or sys.argv[1:]),
        "commit": commit,
        "machine": machine(),
        "judge": judge,
        "judge_fingerprint": fingerprint(judge),
    }


def scorer(judge: str | None) -> Scorer:
    """semantic_green with the rules (judge None) or with the judge export deciding every matched pair it does not
    call `same` (judge_threshold=0, judge_scope=all; the option defaults let it override nowhere, see
    finding_judge_threshold.py)."""
    if judge is None:
        return Scorer(["semantic_green"], n_bootstrap=0)
    options = {"semantic_green": {"judge": "model"}}  # judge_threshold and judge_scope at their defaults
    return Scorer(["semantic_green"], {"finding_judge": judge}, options, n_bootstrap=0)


# --parts that score a suite file: the results key and the file beside suite.jsonl (None: the bundled open suite).
SUITE_PARTS = {
    "suite": ("suite_open_cases", None),
    "open2": ("suite_second_open_cases", "open_2.jsonl"),
    "open3": ("suite_third_open_cases", "open_3.jsonl"),
    "open4": ("suite_fourth_open_cases", "open_4.jsonl"),
    "sealed": ("suite_sealed_cases", "sealed.jsonl"),
    "sealed2": ("suite_second_sealed_cases", "sealed_2.jsonl"),
    "sealed3": ("suite_third_sealed_cases", "sealed_3.jsonl"),
    "sealed4": ("suite_fourth_sealed_cases", "sealed_4.jsonl"),
    "sealed5": ("suite_fifth_sealed_cases", "sealed_5.jsonl"),
    "sealed6": ("suite_sixth_sealed_cases", "sealed_6.jsonl"),
    "sealed7": ("suite_seventh_sealed_cases", "sealed_7.jsonl"),
    "sealed8": ("suite_eighth_sealed_cases", "sealed_8.jsonl"),
    "sealed9": ("suite_ninth_sealed_cases", "sealed_9.jsonl"),
    "sealed10": ("suite_tenth_sealed_cases", "sealed_10.jsonl"),
    "sealed11": ("suite_eleventh_sealed_cases", "sealed_11.jsonl"),
    "sealed12": ("suite_twelfth_sealed_cases", "sealed_12.jsonl"),
}


def suite_file(name: str) -> Path:
    """A suite file beside the bundled open one (the sealed halves, the second open set)."""
    return default_suite().with_name(name)


def suite_part(judge: str, n_bootstrap: int, seed: int, path: Path | None = None) -> dict:
    """The suite's cases (the open ones, or the file `path`), rules and judge side by side."""
    cases = load_suite(path)
    references, candidates, _ = pairs(cases)
    oriented = {}
    for way, judge_path in (("rules", None), ("judge", judge)):
        values = quality_oriented(scorer(judge_path)(references, candidates))
        oriented.update({f"{key} ({way})": list(values[key]) for key in KEYS})
    report = ranking_report(cases, oriented, n_bootstrap, seed)
    return {key: {"all": r["all"], "categories": r["categories"]} for key, r in report.items()}


def attribute_errors(annotation) -> set[int]:
    """Candidate indices of matched pairs with a location, severity or interval-change error."""
    return {
        e.candidate
        for e in annotation.errors
        if e.category in ("c", "d", "e") and e.candidate is not None and e.reference is not None
    }


def rater_attributes(label: dict) -> set[int]:
    return {int(i) for i, e in (label.get("finding_errors") or {}).items() if e.get("error_type") == "attribute"}


def listed_part(candidates, annotations_by_way: dict) -> dict:
    """False, missing and attribute findings against the raters' majority, each way, beside the rater pairs."""
    items = {
        "false": [(n, i) for n, c in enumerate(candidates) for i in range(len(c.findings))],
        "missing": [(n, i) for n, c in enumerate(candidates) for i in range(len(c.reference_findings))],
    }
    items["attribute"] = items["false"]
    raters = [[(*rater_errors(label), rater_attributes(label)) for label in c.labels] for c in candidates]
    report = {}
    for kind, slot in (("false", 0), ("missing", 1), ("attribute", 2)):
        votes = np.array([[i in raters[n][r][slot] for r in range(3)] for n, i in items[kind]], dtype=bool)
        majority = votes.sum(1) >= 2
        entry = {
            "raters": {
                f"rater {a + 1} vs rater {b + 1}": binary_agreement(votes[:, a], votes[:, b])
                for a in range(3)
                for b in range(a + 1, 3)
            }
        }
        for way, judged_annotations in annotations_by_way.items():
            judged = [(*judged_errors(a), attribute_errors(a)) for a in judged_annotations]
            entry[way] = binary_agreement([i in judged[n][slot] for n, i in items[kind]], majority)
        report[kind] = entry
    return report


def listed_annotations(candidates, judge: str) -> dict:
    from radmetrics.inference.metrics.semantic_green.judge import annotate_with_judge

    metric = scorer(judge).metrics()[0]
    rules_teacher = scorer(None).metrics()[0].teacher()  # judge=rules' matching (no synonyms read)
    references = [c.reference_findings for c in candidates]
    found = [c.findings for c in candidates]
    return {
        "rules": rules_teacher.annotate_lists(references, found),
        "judge": annotate_with_judge(metric.teacher(), metric.finding_judge(), references, found, False, 0.0, "all"),
    }


def report_part(candidates, judge: str, n_bootstrap: int, seed: int) -> dict:
    references, texts = [c.reference for c in candidates], [c.text for c in candidates]
    contexts = [c.context for c in candidates]
    scores = {}
    for way, judge_path in (("rules", None), ("judge", judge)):
        values = quality_oriented(scorer(judge_path)(references, texts, context=contexts))
        scores.update({f"{key} ({way})": values[key] for key in KEYS})
    cases, preferred = case_index(candidates), np.zeros(len(candidates) // 2, dtype=int)
    targets = {
        "mean_errors": np.array([c.mean_errors() for c in candidates]),
        "mean_rating": -np.array([c.mean_rating() for c in candidates]),  # agreement() orients by minus its target
    }
    report = {}
    for target, human in targets.items():
        report[target] = {}
        for key in KEYS:
            pair = {f"{key} (rules)": scores[f"{key} (rules)"], f"{key} (judge)": scores[f"{key} (judge)"]}
            found = agreement(pair, human, cases, preferred, f"{key} (rules)", n_bootstrap, seed)
            for entry in found.values():
                entry.pop("preference", None)
            report[target].update(found)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", required=True, help="a finding_judge export (radmetrics export of judge/pairs)")
    parser.add_argument("--results", required=True, help="JSON file for the figures")
    parser.add_argument("--bootstrap", type=int, default=1000, help="case resamples for the 95%% intervals")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--parts",
        nargs="+",
        default=["suite", "listed", "reports"],
        choices=[*SUITE_PARTS, "listed", "reports"],
        help="open2, open3, open4: the other open sets (resources/clinical_ranking/open_2.jsonl, ...); "
        "sealed, sealed2 ... sealed12: the suite's sealed halves (sealed.jsonl, sealed_2.jsonl, ...), each run "
        "once, at the end",
    )
    args = parser.parse_args(argv)
    results_file = check_output_file(args.results, what="--results")
    scorer(args.judge)  # the judge export is checked before any work
    candidates = load_radpref()
    results = {
        **run_record("finding_judge.py", argv, args.judge),
        "judge_held_out": {
            k: v
            for k, v in load_manifest(args.judge, "finding_judge")[1]["eval_results"].items()
            if k.startswith(("test_", "baseline_"))
            and not k.startswith(("test_precision", "test_recall", "test_predicted"))
        },
        "radpref_cases": len({c.case_id for c in candidates}),
    }
    for part, (key, file_name) in SUITE_PARTS.items():
        if part in args.parts:
            path = suite_file(file_name) if file_name else None
            results[key] = suite_part(args.judge, args.bootstrap, args.seed, path)
    if "listed" in args.parts:
        results["radpref_given_listed_findings"] = listed_part(candidates, listed_annotations(candidates, args.judge))
    if "reports" in args.parts:
        results["radpref_report_tau_b"] = report_part(candidates, args.judge, args.bootstrap, args.seed)
    write_text(results_file, dumps(results, indent=2))
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
