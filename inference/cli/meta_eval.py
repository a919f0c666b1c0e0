"""`radmetrics meta-eval ...`: how well metrics agree with radiologists."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

HELP = "meta-evaluate metrics against human judgements (Kendall tau-b, preference accuracy, RadCliQ refit, RaTEScore tuning)"
DESCRIPTION = """Subcommands:

  correlate    Kendall tau-b (1,000-resample bootstrap CI) between each metric and human error counts
               in a ReXVal-like CSV (reference, candidate, error-count column), plus a scatter plot per metric.
               Metric scores are oriented as predicted errors (higher-is-better metrics negated), so a
               positive tau means agreement, as in the RadCliQ paper's Table 4.
  preference   accuracy of each metric at picking the report radiologists preferred
               (CSV: reference, candidate_1, candidate_2, preferred in {1,2}); GREEN paper section 4.3.2.
  fit-radcliq  refit RadCliQ's constrained composite (negated weights non-negative, summing to 1) on a CSV
               with radgraph_radcliq, bertscore, chexbert_similarity, bleu2 and an error-count column.
  tune-ratescore  TPE (optuna) search of RaTEScore's 25 type-pair weights W and penalty p against human
               judgements; JSONL rows with reference_entities / candidate_entities ([[text, type], ...])
               and a human column. Writes a matrix usable as `ratescore_from_entities(..., matrix=PATH)`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="meta_command", metavar="WHAT", required=True)
    corr = sub.add_parser("correlate", help="Kendall tau-b of metrics vs human error counts, with CIs and plots")
    corr.add_argument("--csv", required=True, help="ReXVal-like CSV")
    corr.add_argument("--reference-column", default="reference")
    corr.add_argument("--candidate-column", default="candidate")
    corr.add_argument("--human-column", default="total_errors", help="column of (mean) radiologist error counts")
    corr.add_argument("--metrics", nargs="+", help="metrics to evaluate (default: all available)")
    corr.add_argument("--bootstrap", type=int, default=1000)
    corr.add_argument("--out", required=True)
    pref = sub.add_parser("preference", help="accuracy of metrics on pairwise radiologist preferences")
    pref.add_argument("--csv", required=True)
    pref.add_argument("--metrics", nargs="+")
    pref.add_argument("--out", required=True)
    fit = sub.add_parser("fit-radcliq", help="refit the RadCliQ composite on human error counts (CVXPY)")
    fit.add_argument("--csv", required=True)
    fit.add_argument("--human-column", default="total_errors")
    fit.add_argument("--out", required=True, help="JSON file for the fitted parameters")
    tune = sub.add_parser("tune-ratescore", help="TPE search of RaTEScore's affinity matrix and penalty (optuna)")
    tune.add_argument("--data", required=True, help="JSONL: reference_entities, candidate_entities, human column")
    tune.add_argument("--human-column", default="total_errors")
    tune.add_argument("--human-higher-is-better", action="store_true",
                      help="the human column is a quality rating (default: an error count, lower is better)")
    tune.add_argument("--trials", type=int, default=200)
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--encoder", default="default", help="entity encoder (default: bundled MiniLM)")
    tune.add_argument("--pooling", default="mean", choices=["mean", "cls"], help="cls as RaTEScore does with BioLORD")
    tune.add_argument("--out", required=True, help="output directory (affinity_tuned.json, tuning.json)")


def _rows(path: str, required: list[str]) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise SystemExit(f"{path}: missing column(s) {missing}; found {list(rows[0])}")
    return rows


def _orientation(key: str) -> float:
    """+1 if higher means more errors (RadCliQ), -1 if higher means better."""
    return 1.0 if key.startswith(("radcliq", "fineradscore")) else -1.0


def correlate(args) -> int:
    import numpy as np

    from ..scorer import Scorer
    from ..stats import kendall_tau_b

    rows = _rows(args.csv, [args.reference_column, args.candidate_column, args.human_column])
    human = np.array([float(r[args.human_column]) for r in rows])
    result = Scorer(args.metrics, n_bootstrap=0)([r[args.reference_column] for r in rows], [r[args.candidate_column] for r in rows])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    for key in result.summary:
        scores = np.array([row[key] for row in result.per_sample], dtype=float)
        report[key] = kendall_tau_b(_orientation(key) * scores, human, args.bootstrap)
        _scatter(scores, human, key, out / f"scatter_{key}.png")
    (out / "kendall_tau_b.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print("| score | tau-b | 95% CI | n |\n|---|---|---|---|")
    for key, r in report.items():
        print(f"| {key} | {r['tau_b']:.3f} | [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] | {r['n']} |")
    return 0


def _scatter(scores, human, key: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(scores, human, s=12, alpha=0.6)
    ax.set_xlabel(key)
    ax.set_ylabel("radiologist error count")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def preference(args) -> int:
    from ..scorer import Scorer

    rows = _rows(args.csv, ["reference", "candidate_1", "candidate_2", "preferred"])
    refs = [r["reference"] for r in rows]
    s1 = Scorer(args.metrics, n_bootstrap=0)(refs, [r["candidate_1"] for r in rows])
    s2 = Scorer(args.metrics, n_bootstrap=0)(refs, [r["candidate_2"] for r in rows])
    report = {}
    for key in s1.summary:
        sign = -_orientation(key)
        correct = 0
        for row, a, b in zip(rows, s1.per_sample, s2.per_sample):
            picked = "1" if sign * a[key] > sign * b[key] else "2" if sign * a[key] < sign * b[key] else None
            correct += picked == str(row["preferred"]).strip()
        report[key] = {"accuracy": correct / len(rows), "n": len(rows)}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "preference_accuracy.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


def fit(args) -> int:
    import numpy as np

    from ..metrics.radcliq.composite import FEATURES, fit_radcliq

    rows = _rows(args.csv, [*FEATURES, args.human_column])
    params = fit_radcliq(np.array([[float(r[f]) for f in FEATURES] for r in rows]), np.array([float(r[args.human_column]) for r in rows]))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(params, indent=2), encoding="utf-8")
    print(json.dumps(params, indent=2))
    return 0


def _entity_rows(path: str, human_column: str) -> list[dict]:
    from ..report_io import ReportFileError, read_jsonl_records

    try:
        rows = [r for _, r in read_jsonl_records(path, ("reference_entities", "candidate_entities", human_column))]
    except ReportFileError as exc:
        raise SystemExit(str(exc)) from None
    if len(rows) < 3:
        raise SystemExit(f"{path}: need at least 3 rated pairs to rank, found {len(rows)}")
    return rows


def tune(args) -> int:
    from ..metrics.ratescore.tuning import tune_ratescore

    rows = _entity_rows(args.data, args.human_column)
    result = tune_ratescore([r["reference_entities"] for r in rows], [r["candidate_entities"] for r in rows],
                            [float(r[args.human_column]) for r in rows], args.trials, args.seed,
                            args.human_higher_is_better, args.encoder, args.pooling)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "affinity_tuned.json").write_text(json.dumps(result["affinity"], indent=2), encoding="utf-8")
    summary = {k: v for k, v in result.items() if k != "affinity"} | {"encoder": args.encoder, "seed": args.seed}
    (out / "tuning.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"Kendall tau-b {result['tau_b']:.4f} (bundled long matrix: {result['default_long_tau_b']:.4f}) "
          f"over {result['n_pairs']} pairs, {result['n_trials']} trials -> {out / 'affinity_tuned.json'}")
    return 0


def run(args: argparse.Namespace) -> int:
    commands = {"correlate": correlate, "preference": preference, "fit-radcliq": fit, "tune-ratescore": tune}
    return commands[args.meta_command](args)
