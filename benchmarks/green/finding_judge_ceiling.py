"""How much could any finding-pair judge gain on radpref_dev's report-level agreement? The ceiling of issue 61's
radpref gate, measured by giving the judge's place to the raters themselves.

semantic_green's significant count is the sum of what the matcher leaves unmatched (false and missing findings, which
the extractor and the cosine matcher decide) and of what the matched pairs cost (which the judge decides). Here the
matched pairs' cost is replaced by oracles built from the raters' own labels, the unmatched findings keep the rules'
cost, and report-level tau-b against the raters' mean error count and mean rating is compared with judge=rules (case
bootstrap, paired difference):

1. Findings extracted from the full reports, as semantic_green scores. The extracted findings cannot be aligned with
   the raters' labels, so the oracle is per report: every matched pair costs nothing (`all matched same`), plus the
   raters' mean count of attribute errors on that report (`+ raters' attribute errors`; their significant ones only,
   `+ raters' significant attribute errors`). This oracle knows every attribute error the raters marked, even on
   findings the matcher did not pair.
2. RadPref's listed findings, to which the raters' labels are keyed: a perfect decider of the pairs the matcher makes.
   Each matched pair (reference finding r, candidate finding c) costs the raters' mean of [c is marked false or with
   an attribute error] + [r is marked missing], which is what a decider that agreed with the raters on every pair
   (same, an attribute error, or two unrelated findings) would count.

3. Which side's extraction costs the agreement: the judge at its defaults on the findings extracted from both reports,
   on RadPref's listed findings for one side and the extracted ones for the other, and on the listed findings of both.

Nothing is chosen here; the judge's own figures are finding_judge.py's and finding_judge_threshold.py's.

    python benchmarks/green/finding_judge_ceiling.py --results benchmarks/results/finding_judge_ceiling.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO  # noqa: E402
from finding_judge import run_record, scorer  # noqa: E402
from finding_judge_threshold import Annotator, extracted, rules_counts  # noqa: E402

from radmetrics.inference.files.atomic import write_text  # noqa: E402
from radmetrics.inference.files.json_io import dumps  # noqa: E402
from radmetrics.inference.files.output_paths import check_output_file  # noqa: E402
from radmetrics.inference.findings.judge_labels import JudgeDecision  # noqa: E402
from radmetrics.inference.meta_evaluation.radpref import agreement, case_index, is_significant, load_radpref  # noqa: E402
from radmetrics.inference.metrics.semantic_green.judge import judged_annotation  # noqa: E402
from radmetrics.inference.metrics.semantic_green.metric import SemanticGreen  # noqa: E402
from radmetrics.inference.metrics.semantic_green.teacher import assignment  # noqa: E402

# semantic_green's judge_threshold, judge_scope and judge_significance, as its options default them
DEFAULT_SETTING = tuple(
    SemanticGreen.options[name].default for name in ("judge_threshold", "judge_scope", "judge_significance")
)


def unmatched_cost(annotator: Annotator) -> np.ndarray:
    """Each candidate's significant count with every matched pair called the same finding: what the unmatched findings
    cost."""
    same = {pair: JudgeDecision("same") for pair in annotator.distinct}
    rules_ = annotator.teacher.rules
    return np.array(
        [float(sum(judged_annotation(r, c, s, rules_, same).significant)) for r, c, s in annotator.similarities]
    )


def raters_attribute_errors(candidate, significant_only: bool) -> float:
    """The raters' mean count of attribute errors on one candidate report (significant ones only, if asked)."""
    counts = []
    for label in candidate.labels:
        errors = [e for e in label.get("finding_errors", {}).values() if e.get("error_type") == "attribute"]
        counts.append(sum(is_significant(e) for e in errors) if significant_only else len(errors))
    return float(np.mean(counts))


def matched_pairs_as_raters_saw_them(annotator: Annotator, candidates) -> np.ndarray:
    """Per candidate, given the listed findings: what the matcher's pairs cost when each is decided as the raters
    labelled its two findings (rater means)."""
    costs = []
    for candidate, (_, _, similarity) in zip(candidates, annotator.similarities):
        cost = 0.0
        for r, c in assignment(similarity, annotator.teacher.rules.threshold):
            marks = [
                (str(c) in label.get("finding_errors", {})) + (str(r) in label.get("missing_findings", {}))
                for label in candidate.labels
            ]
            cost += float(np.mean(marks))
        costs.append(cost)
    return np.array(costs)


def compared(counts: dict, candidates, n_bootstrap: int, seed: int) -> dict:
    """Report-level tau-b of minus each count against the raters' mean error count and mean rating, each paired with
    `rules`."""
    cases, preferred = case_index(candidates), np.zeros(len(candidates) // 2, dtype=int)
    targets = {
        "mean_errors": np.array([c.mean_errors() for c in candidates]),
        "mean_rating": -np.array([c.mean_rating() for c in candidates]),  # `agreement` takes errors: higher = worse
    }
    scores = {name: -np.asarray(count) for name, count in counts.items()}
    report = {}
    for target, human in targets.items():
        found = agreement(scores, human, cases, preferred, "rules", n_bootstrap, seed)
        for entry in found.values():
            entry.pop("preference", None)
        report[target] = found
    return report


def extracted_part(metric, candidates, n_bootstrap: int, seed: int) -> dict:
    references, texts = [c.reference for c in candidates], [c.text for c in candidates]
    annotator = Annotator(metric, *extracted(metric, references, texts))
    free = unmatched_cost(annotator)
    counts = {
        "rules": rules_counts(references, texts),
        "judge at the defaults": annotator.significant(DEFAULT_SETTING),
        "all matched same": free,
        "all matched same + raters' attribute errors": free
        + np.array([raters_attribute_errors(c, False) for c in candidates]),
        "all matched same + raters' significant attribute errors": free
        + np.array([raters_attribute_errors(c, True) for c in candidates]),
    }
    return {"matched_pairs": len(annotator.distinct), **compared(counts, candidates, n_bootstrap, seed)}


def listed_part(metric, candidates, n_bootstrap: int, seed: int) -> dict:
    annotator = Annotator(metric, [c.reference_findings for c in candidates], [c.findings for c in candidates])
    counts = {
        # threshold 1.0: the rules' decisions over judge=model's matching (a diagnosis's synonyms read as it)
        "rules": annotator.significant((1.0, "matched", "lexicon")),
        "judge at the defaults": annotator.significant(DEFAULT_SETTING),
        "perfect pair decider": unmatched_cost(annotator) + matched_pairs_as_raters_saw_them(annotator, candidates),
    }
    return {"matched_pairs": len(annotator.distinct), **compared(counts, candidates, n_bootstrap, seed)}


def one_side_listed_part(metric, candidates, n_bootstrap: int, seed: int) -> dict:
    references, texts = [c.reference for c in candidates], [c.text for c in candidates]
    found_references, found_candidates = extracted(metric, references, texts)
    listed_references, listed_candidates = [c.reference_findings for c in candidates], [c.findings for c in candidates]
    sides = {
        "extracted, both sides": (found_references, found_candidates),
        "listed references, extracted candidates": (listed_references, found_candidates),
        "extracted references, listed candidates": (found_references, listed_candidates),
        "listed, both sides": (listed_references, listed_candidates),
    }
    counts = {"rules": rules_counts(references, texts)}
    counts.update({name: Annotator(metric, *lists).significant(DEFAULT_SETTING) for name, lists in sides.items()})
    return compared(counts, candidates, n_bootstrap, seed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shipped = REPO / "inference/resources/finding_judge"
    parser.add_argument("--judge", default=str(shipped), help="a finding_judge export (default: the shipped one)")
    parser.add_argument("--results", required=True, help="JSON file for the figures")
    parser.add_argument("--bootstrap", type=int, default=1000, help="case resamples for the 95%% intervals")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results_file = check_output_file(args.results, what="--results")
    metric = scorer(args.judge).metrics()[0]
    candidates = load_radpref()
    results = {
        **run_record("finding_judge_ceiling.py", argv, args.judge),
        "extracted_findings": extracted_part(metric, candidates, args.bootstrap, args.seed),
        "listed_findings": listed_part(metric, candidates, args.bootstrap, args.seed),
        "one_side_listed (the judge at its defaults)": one_side_listed_part(
            metric, candidates, args.bootstrap, args.seed
        ),
    }
    write_text(results_file, dumps(results, indent=2))
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
