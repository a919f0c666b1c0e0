"""How the semantic GREEN teacher's threshold and rules were chosen, on RadPref's development half alone.

For minus the teacher's significant error count against minus the three radiologists' mean error count (100
candidates, 50 cases), Kendall tau-b:
- at each threshold from 0.40 to 0.80;
- with each rule switched off or replaced, one at a time (`Rules` in inference/metrics/semantic_green/teacher.py);
- case-level 5-fold cross-validation: the threshold chosen by tau-b on the training folds' candidates, the held-out
  folds' scores pooled into one tau-b over all 100, for 20 seeded fold draws (mean, min, max);
- per category: the teacher's count against the radiologists' count of the matching label kind;
- the programmatic teacher's rule applied to the texts alone (sentences matched by normalised text), for comparison.

    python benchmarks/green/semantic_green_radpref.py --out benchmarks/results/semantic_green_radpref_dev.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from radmetrics.inference.scoring.stats import tau_value as tau

THRESHOLDS = [0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80]
ABLATIONS = {  # name: the Rules fields changed from the chosen ones
    "chosen rules": {},
    "significance by cue only (any unmatched non-normal statement)": {"significance": "cue"},
    "unmatched normal statements significant": {"unmatched_normal_significant": True},
    "no polarity-flip rule": {"polarity_flips": False},
    "no location rule": {"location": False},
    "no severity rule": {"severity": False},
}
CATEGORY_LABELS = {"a": "false", "b": "missing", "c": "location", "d": "severity"}


class MemoEncoder:
    """The sentence encoder with every text embedded once for all the variants."""

    def __init__(self, encoder):
        self.encoder, self.memo = encoder, {}

    def encode(self, texts, batch_size=64, progress=False, desc=""):
        new = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if new:
            self.memo.update(zip(new, self.encoder.encode(new, batch_size=batch_size)))
        return np.stack([self.memo[t] for t in texts]) if texts else self.encoder.encode([])


def string_rule_errors(reference: str, candidate: str) -> int:
    """The programmatic teacher's decision made from the texts alone: a sentence of one report whose normalised text
    the other lacks is a difference, significant when the pair builders' rule calls it an abnormal finding
    (data_builders/pairs/edit_lexicons.py). The programmatic teacher's significant counts are this rule applied to its
    edits."""
    from radmetrics.data_builders.pairs.builders import findings, normalise_sentence
    from radmetrics.inference.text.sentences import split_sentences

    ref, cand = split_sentences(reference), split_sentences(candidate)
    ref_texts, cand_texts = {normalise_sentence(s) for s in ref}, {normalise_sentence(s) for s in cand}
    differences = [s for s in ref if normalise_sentence(s) not in cand_texts] + [
        s for s in cand if normalise_sentence(s) not in ref_texts
    ]
    return sum(findings.is_abnormal_finding(s) for s in differences)


def cross_validated(
    scores_by_threshold: dict[float, np.ndarray],
    target: np.ndarray,
    cases: np.ndarray,
    seeds: int = 20,
    folds: int = 5,
) -> dict:
    n_cases = cases.max() + 1
    pooled, chosen = [], []
    for seed in range(seeds):
        out_of_fold = np.zeros(len(target))
        for held in np.array_split(np.random.default_rng(seed).permutation(n_cases), folds):
            test = np.isin(cases, held)
            best = max(THRESHOLDS, key=lambda t: tau(scores_by_threshold[t][~test], target[~test]))  # first maximum
            chosen.append(best)
            out_of_fold[test] = scores_by_threshold[best][test]
        pooled.append(tau(out_of_fold, target))
    return {
        "pooled_tau_b_mean": float(np.mean(pooled)),
        "min": float(np.min(pooled)),
        "max": float(np.max(pooled)),
        "seed_0": pooled[0],
        "seeds": seeds,
        "folds": folds,
        "thresholds_chosen": {str(t): chosen.count(t) for t in sorted(set(chosen))},
    }


def main(argv=None) -> int:
    from radmetrics.inference.meta_evaluation.radpref import case_index, load_radpref
    from radmetrics.inference.metrics.semantic_green.teacher import Rules, SemanticTeacher
    from radmetrics.inference.models.text_encoder import TextEncoder

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parents[1] / "results" / "semantic_green_radpref_dev.json")
    )
    args = parser.parse_args(argv)

    candidates = load_radpref()
    references, texts = [c.reference for c in candidates], [c.text for c in candidates]
    target = -np.array([c.mean_errors() for c in candidates])
    cases = case_index(candidates)
    encoder = MemoEncoder(TextEncoder("default"))
    start = time.perf_counter()

    def run(rules):
        return SemanticTeacher(encoder, rules)(references, texts)

    chosen = Rules()
    by_threshold = {
        t: -np.array([sum(a.significant) for a in run(replace(chosen, threshold=t))], dtype=float) for t in THRESHOLDS
    }
    ablations = {}
    for name, change in ABLATIONS.items():
        annotations = run(replace(chosen, **change))
        ablations[name] = {
            "rules": change,
            "tau_b": tau([-sum(a.significant) for a in annotations], target),
            "tau_b_green_score": tau([a.score for a in annotations], target),
        }
    annotations = run(chosen)
    calibration = {}
    for letter, kind in CATEGORY_LABELS.items():
        index = "abcdef".index(letter)
        mine = np.array([a.significant[index] for a in annotations])
        theirs = np.array([c.mean_count(kind) for c in candidates])
        calibration[f"({letter}) significant vs raters' {kind}"] = {
            "tau_b": tau(mine, theirs) if mine.std() and theirs.std() else None,
            "teacher_total": int(mine.sum()),
            "raters_mean_total": float(theirs.sum()),
        }
    significant = np.array([sum(a.significant) for a in annotations])
    calibration["significant total vs raters' significant"] = {
        "tau_b": tau(significant, [c.mean_count("significant") for c in candidates]),
        "teacher_total": int(significant.sum()),
        "raters_mean_total": float(sum(c.mean_count("significant") for c in candidates)),
    }
    report = {
        "command": "python benchmarks/green/semantic_green_radpref.py",
        "data": "radpref_dev (bundled: 50 cases, 100 candidates)",
        "target": "minus the mean over 3 raters of finding_errors + missing_findings",
        "score": "minus the teacher's significant error count",
        "chosen_rules": asdict(chosen),
        "tau_b_by_threshold": {str(t): tau(s, target) for t, s in by_threshold.items()},
        "ablations": ablations,
        "cross_validation": cross_validated(by_threshold, target, cases),
        "calibration": calibration,
        "programmatic_string_rule_tau_b": tau([-string_rule_errors(r, t) for r, t in zip(references, texts)], target),
        "seconds": round(time.perf_counter() - start, 1),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: report[k] for k in ("tau_b_by_threshold", "cross_validation", "programmatic_string_rule_tau_b")},
            indent=2,
        )
    )
    for name, entry in ablations.items():
        print(f"{entry['tau_b']:.3f}  {name}")
    for name, entry in calibration.items():
        print(
            f"{entry['tau_b'] if entry['tau_b'] is None else round(entry['tau_b'], 3)}  {name}  "
            f"({entry['teacher_total']} vs {entry['raters_mean_total']:.1f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
