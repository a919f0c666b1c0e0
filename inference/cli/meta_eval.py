"""`radmetrics meta-eval ...`: how well metrics agree with radiologists."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from ..json_io import dumps
from ..stats import UNSCORABLE, preference_accuracy
from .score import add_scoring_arguments, build_scorer

HELP = (
    "meta-evaluate metrics against human judgements (Kendall tau, preference accuracy, RadCliQ refit, RaTEScore"
    " tuning)"
)
DESCRIPTION = """Subcommands:

  correlate    Kendall tau-b and tau-c (1,000-resample bootstrap CIs) between each metric and human judgements in a
               CSV (reference, candidate, one column per rater: --human-columns). With several raters: agreement with
               each rater and with their mean, next to the inter-rater baseline (each rater against the mean of the
               others, and rater pairs). Scores are oriented by each metric's declared direction, the human columns as
               error counts (lower is better) unless --human-higher-is-better, so a positive tau means agreement, as in
               the RadCliQ paper's Table 4. Writes a scatter plot per metric.
  preference   accuracy of each metric at picking the candidate radiologists preferred (CSV: reference,
               candidate_1, candidate_2, and one preference column per rater holding 1, 2, or 0 / "tie"), with a
               bootstrap 95% CI; --ties says how a metric's tie counts (half, wrong or skip); human ties and pairs
               without a majority are left out and counted. GREEN paper section 4.3.2.
  fit-radcliq  refit RadCliQ-v1's constrained composite (negated weights non-negative, summing to 1) on a CSV with
               radgraph_radcliq, bertscore, chexbert_similarity, bleu2 and an error-count column; reports the
               cross-validated (held-out) tau of the refit next to the published constants'. Use the result with
               `radmetrics score --option radcliq.constants=FILE`.
  tune-ratescore  TPE (optuna) search of RaTEScore's 25 type-pair weights W and penalty p against human
               judgements (JSONL rows with reference_entities / candidate_entities ([[text, type], ...]) and a human
               column); reports the cross-validated (held-out) tau of the tuned matrix next to the bundled one's. Use
               the matrix with `radmetrics score --option ratescore.matrix=FILE`.

  radpref      agreement with three radiologists on RadPref's development half (bundled: 50 cases, 100 candidate
               reports): per score key, Kendall tau-b against the raters' mean error count with a 95% interval that
               resamples cases, the paired difference with ROUGE-L, and preference accuracy on the cases where 2 of 3
               raters rate one candidate higher. Without --metrics, every metric the components allow; give exports
               with --components to add the learned metrics. `keys_vs_rating` gives tau-b against the raters' mean
               1-5 rating too. --part develop|frozen|all (default all) picks a part of the frozen split. Writes
               OUT/agreement.json and OUT/agreement.md.

  significance each listed finding that 2 or more raters marked as an error, with the level 2 or more of them gave:
               radmetrics' clinical significance of it (inference/findings/significance.py) against that level,
               linear-weighted kappa with a case-bootstrap interval, exact agreement and the confusion table, beside
               each rater against the level the other two agree on. --part develop (default) or frozen (touched once).
               Writes OUT/significance_agreement.json.

  findings     where semantic_green loses agreement on RadPref, stage by stage, on one part of its frozen split
               (--part develop, 30 cases; frozen, 20 cases touched once at the end; or all): the extractor's findings
               against RadPref's listed findings (precision, recall, F1, one to one at MiniLM cosine >= 0.6); the judge
               given the listed findings (false and missing findings against the raters' majority, F1 and kappa,
               beside each pair of raters); and report-level tau-b on the full reports, on the extracted findings and
               on the listed findings, with case-bootstrap intervals and paired differences. --extractor trained (the
               shipped findings extractor, the default), an export or run directory, or rules (the statement filter).
               Writes OUT/findings_agreement.json.
  ranking      the clinical ranking suite (bundled: 49 cases in 10 categories, each a reference and 2-4 candidates
               best first): per score key, how often the metric orders two candidates as expected (pairwise accuracy,
               a tie half) over all cases and per category, and the share of cases ordered exactly. --suite FILE runs
               another suite (JSONL: id, category, reference, candidates best first). Writes OUT/ranking.json and
               OUT/ranking.md.

correlate, preference, radpref and ranking score with the same --metrics, --components, --option and --endpoint as \
`radmetrics score`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="meta_command", metavar="WHAT", required=True)
    corr = sub.add_parser("correlate", help="Kendall tau of metrics vs human judgements, with CIs, per rater")
    corr.add_argument("--csv", required=True, help="one row per reference/candidate pair")
    corr.add_argument("--reference-column", default="reference")
    corr.add_argument("--candidate-column", default="candidate")
    corr.add_argument(
        "--human-columns",
        "--human-column",
        nargs="+",
        default=["total_errors"],
        help="one column per rater (error counts, or ratings with --human-higher-is-better)",
    )
    corr.add_argument("--human-higher-is-better", action="store_true", help="the human columns are quality ratings")
    add_scoring_arguments(corr)
    corr.add_argument("--out", required=True)
    pref = sub.add_parser("preference", help="accuracy of metrics on pairwise radiologist preferences")
    pref.add_argument("--csv", required=True)
    pref.add_argument("--reference-column", default="reference")
    pref.add_argument("--candidate-columns", nargs=2, default=["candidate_1", "candidate_2"])
    pref.add_argument(
        "--preferred-columns",
        "--preferred-column",
        nargs="+",
        default=["preferred"],
        help="one column per rater: 1, 2, or 0 / 'tie'",
    )
    pref.add_argument(
        "--ties",
        choices=["half", "wrong", "skip"],
        default="half",
        help="a metric scoring both candidates equally: half credit (default), wrong, or left out",
    )
    add_scoring_arguments(pref)
    pref.add_argument("--out", required=True)
    radpref = sub.add_parser(
        "radpref", help="agreement of every metric with radiologists on RadPref's development half"
    )
    radpref.add_argument(
        "--data", help="a RadPref folder (preference_data.json, user_*.json; default: the bundled half)"
    )
    radpref.add_argument("--baseline", default="rougeL", help="the key every other key's tau-b is compared with")
    radpref.add_argument(
        "--part",
        choices=["develop", "frozen", "all"],
        default="all",
        help="the part of the frozen split of the bundled half (develop: 30 cases; frozen: 20, touched once; all)",
    )
    add_scoring_arguments(radpref)
    radpref.add_argument("--out", required=True)
    significance = sub.add_parser(
        "significance", help="clinical significance per finding against RadPref's raters (weighted kappa)"
    )
    significance.add_argument(
        "--part", choices=["develop", "frozen", "all"], default="develop", help="the part of the frozen split"
    )
    significance.add_argument("--bootstrap", type=int, default=1000, help="case bootstrap resamples for the interval")
    significance.add_argument("--seed", type=int, default=0)
    significance.add_argument("--out", required=True)
    findings = sub.add_parser("findings", help="finding-level agreement with RadPref's raters, stage by stage")
    findings.add_argument(
        "--part", choices=["develop", "frozen", "all"], default="develop", help="the part of the frozen split"
    )
    findings.add_argument(
        "--extractor",
        default="trained",
        help=(
            "the findings extractor: trained (the shipped export), an export or a findings/classifier run directory, "
            "or rules (the statement filter semantic_green used before it)"
        ),
    )
    findings.add_argument(
        "--grid",
        nargs="+",
        metavar="STATEMENT,CLAUSE",
        help="also measure a trained extractor at these threshold pairs (how the shipped thresholds were chosen)",
    )
    findings.add_argument("--bootstrap", type=int, default=1000, help="case bootstrap resamples for the intervals")
    findings.add_argument("--seed", type=int, default=0)
    findings.add_argument("--out", required=True)
    ranking = sub.add_parser("ranking", help="how each metric orders candidates on the clinical ranking suite")
    ranking.add_argument("--suite", help="a suite JSONL file (default: the bundled clinical ranking suite)")
    add_scoring_arguments(ranking)
    ranking.add_argument("--out", required=True)
    fit = sub.add_parser("fit-radcliq", help="refit the RadCliQ-v1 composite on human error counts (CVXPY)")
    fit.add_argument("--csv", required=True)
    fit.add_argument("--human-column", default="total_errors")
    fit.add_argument("--folds", type=int, default=5, help="cross-validation folds for the held-out tau (0: none)")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", required=True, help="JSON file for the fitted constants")
    tune = sub.add_parser("tune-ratescore", help="TPE search of RaTEScore's affinity matrix and penalty (optuna)")
    tune.add_argument("--data", required=True, help="JSONL: reference_entities, candidate_entities, human column")
    tune.add_argument("--human-column", default="total_errors")
    tune.add_argument(
        "--human-higher-is-better",
        action="store_true",
        help="the human column is a quality rating (default: an error count, lower is better)",
    )
    tune.add_argument("--trials", type=int, default=200)
    tune.add_argument("--folds", type=int, default=5, help="cross-validation folds for the held-out tau (0: none)")
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--encoder", default="default", help="entity encoder (default: bundled MiniLM)")
    tune.add_argument("--pooling", default="mean", choices=["mean", "cls"], help="cls as RaTEScore does with BioLORD")
    tune.add_argument("--out", required=True, help="output directory (affinity_tuned.json, tuning.json)")


def _rows(path: str, required: list[str]) -> list[dict]:
    from ..report_io import ReportFileError

    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ReportFileError(f"{path}: not a readable UTF-8 CSV file ({exc})") from exc
    if not rows:
        raise ReportFileError(f"{path}: no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise ReportFileError(f"{path}: missing column(s) {missing}; found {list(rows[0])}")
    return rows


def _numbers(rows: list[dict], column: str, path: str) -> list[float]:
    from ..report_io import ReportFileError

    values = []
    for n, row in enumerate(rows, 2):
        try:
            values.append(float(row[column]))
        except (TypeError, ValueError):
            raise ReportFileError(f"{path}: row {n}: {column} is {row[column]!r}, not a number") from None
    return values


def _write(out: Path, name: str, report: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(dumps(report, indent=2), encoding="utf-8")


def correlate(args) -> int:
    import numpy as np

    from ..report_html import write_figures_report
    from ..stats import kendall_tau

    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    rows = _rows(args.csv, [args.reference_column, args.candidate_column, *args.human_columns])
    raters = {
        c: np.array(_numbers(rows, c, args.csv)) * (-1.0 if args.human_higher_is_better else 1.0)
        for c in args.human_columns
    }
    mean = np.mean(list(raters.values()), axis=0)
    result = scorer(
        [r[args.reference_column] for r in rows],
        [r[args.candidate_column] for r in rows],
        ids=[f"row {n}" for n in range(2, len(rows) + 2)],
    )

    def agreement(x, y) -> dict:
        return {
            **kendall_tau(x, y, "b", args.bootstrap, args.seed),
            **kendall_tau(x, y, "c", args.bootstrap, args.seed),
        }

    out.mkdir(parents=True, exist_ok=True)
    report = {
        "n_pairs": len(rows),
        "raters": list(raters),
        "human_orientation": "higher is better" if args.human_higher_is_better else "error counts (lower is better)",
        "metrics": {},
    }
    for key in result.summary:
        predicted_errors = np.array(
            [np.nan if row[key] is None else row[key] for row in result.per_sample], dtype=float
        )
        predicted_errors *= -1.0 if result.higher_is_better[key] else 1.0
        entry = {"higher_is_better": result.higher_is_better[key], "mean_of_raters": agreement(predicted_errors, mean)}
        if len(raters) > 1:
            entry["per_rater"] = {name: agreement(predicted_errors, values) for name, values in raters.items()}
        report["metrics"][key] = entry
        tau = entry["mean_of_raters"]
        _scatter(
            predicted_errors,
            mean,
            key,
            out / f"scatter_{key}.png",
            f"{key}: tau-b {tau['tau_b']:.3f} {_interval(tau['ci95'])}, n={tau['n']}",
        )
    if len(raters) > 1:
        names = list(raters)
        others = {n: np.mean([raters[m] for m in names if m != n], axis=0) for n in names}
        report["inter_rater"] = {
            "rater_vs_mean_of_others": {n: agreement(raters[n], others[n]) for n in names},
            "rater_pairs": {
                f"{a} vs {b}": agreement(raters[a], raters[b]) for i, a in enumerate(names) for b in names[i + 1 :]
            },
        }
    report["signatures"] = result.signatures
    _write(out, "kendall_tau.json", report)
    write_figures_report(
        out,
        "radmetrics meta-eval: agreement with radiologists",
        f"{len(rows)} pairs; Kendall tau-b of each score (oriented so that higher means more errors) against the "
        "mean of the raters, with its 95% bootstrap interval.",
        [
            (
                f"{key}: tau-b {e['mean_of_raters']['tau_b']:.3f} {_interval(e['mean_of_raters']['ci95'])}",
                out / f"scatter_{key}.png",
            )
            for key, e in report["metrics"].items()
        ],
    )
    print("| score | tau-b vs mean of raters | 95% CI | tau-c | n |\n|---|---|---|---|---|")
    for key, entry in report["metrics"].items():
        m = entry["mean_of_raters"]
        print(f"| {key} | {m['tau_b']:.3f} | [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}] | {m['tau_c']:.3f} | {m['n']} |")
    if "inter_rater" in report:
        for name, value in report["inter_rater"]["rater_vs_mean_of_others"].items():
            print(
                f"| inter-rater: {name} vs the others | {value['tau_b']:.3f} | [{value['ci95'][0]:.3f},"
                f" {value['ci95'][1]:.3f}] | {value['tau_c']:.3f} | {value['n']} |"
            )
    return 0


def _scatter(scores, human, key: str, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(scores, human, s=12, alpha=0.6)
    ax.set_xlabel(f"{key} (oriented: higher = more errors)")
    ax.set_ylabel("radiologists (mean, error orientation)")
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _preference(value: str, path: str, n: int) -> int:
    from ..report_io import ReportFileError

    text = str(value).strip().lower()
    if text in ("1", "2"):
        return int(text)
    if text in ("0", "tie", ""):
        return 0
    raise ReportFileError(f"{path}: row {n}: preference {value!r} is not 1, 2, 0 or 'tie'")


def _number(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _interval(bounds) -> str:
    return "n/a" if any(b is None or b != b for b in bounds) else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def preference(args) -> int:
    import numpy as np

    first, second = args.candidate_columns
    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    rows = _rows(args.csv, [args.reference_column, first, second, *args.preferred_columns])
    raters = {
        c: np.array([_preference(r[c], args.csv, n) for n, r in enumerate(rows, 2)]) for c in args.preferred_columns
    }
    votes = np.stack(list(raters.values()))
    ones, twos = (votes == 1).sum(0), (votes == 2).sum(0)
    majority = np.where(ones > twos, 1, np.where(twos > ones, 2, 0))
    refs = [r[args.reference_column] for r in rows]
    result = scorer(
        refs + refs,
        [r[first] for r in rows] + [r[second] for r in rows],
        ids=[f"row {n} {c}" for c in (first, second) for n in range(2, len(rows) + 2)],
    )
    n = len(rows)
    report = {"n_pairs": n, "raters": list(raters), "ties": args.ties, "metrics": {}}
    for key in result.summary:
        values = np.array([np.nan if row[key] is None else row[key] for row in result.per_sample], dtype=float)
        oriented = values if result.higher_is_better[key] else -values
        a, b = oriented[:n], oriented[n:]
        picked = np.where(a > b, 1, np.where(b > a, 2, 0))
        picked = np.where(np.isnan(a) | np.isnan(b), UNSCORABLE, picked)
        entry = {
            "higher_is_better": result.higher_is_better[key],
            "majority": preference_accuracy(picked, majority, args.ties, args.bootstrap, args.seed),
        }
        if len(raters) > 1:
            entry["per_rater"] = {
                name: preference_accuracy(picked, v, args.ties, args.bootstrap, args.seed)
                for name, v in raters.items()
            }
        report["metrics"][key] = entry
    if len(raters) > 1:
        names = list(raters)
        report["inter_rater"] = {
            f"{x} vs {y}": preference_accuracy(raters[x], raters[y], "skip", args.bootstrap, args.seed)
            for i, x in enumerate(names)
            for y in names[i + 1 :]
        }
    report["signatures"] = result.signatures
    _write(out, "preference_accuracy.json", report)
    print(
        "| score | accuracy vs majority | 95% CI | metric ties | unscorable (left out) | n"
        " |\n|---|---|---|---|---|---|"
    )
    for key, entry in report["metrics"].items():
        m = entry["majority"]
        print(
            f"| {key} | {_number(m['accuracy'])} | {_interval(m['ci95'])} | {m['metric_ties']} |"
            f" {m['unscorable_left_out']} | {m['n']} |"
        )
    for pair, value in report.get("inter_rater", {}).items():
        print(
            f"| inter-rater: {pair} | {_number(value['accuracy'])} | {_interval(value['ci95'])} | | | {value['n']} |"
        )
    return 0


def fit(args) -> int:
    import numpy as np

    from ..metrics.radcliq.composite import FEATURES, cross_validate_radcliq, fit_radcliq

    rows = _rows(args.csv, [*FEATURES, args.human_column])
    features = np.array([_numbers(rows, f, args.csv) for f in FEATURES]).T
    errors = np.array(_numbers(rows, args.human_column, args.csv))
    params = fit_radcliq(features, errors)
    if args.folds > 1:
        params["held_out"] = cross_validate_radcliq(features, errors, args.folds, args.seed)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(dumps(params, indent=2), encoding="utf-8")
    print(dumps(params, indent=2))
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
    result = tune_ratescore(
        [r["reference_entities"] for r in rows],
        [r["candidate_entities"] for r in rows],
        [float(r[args.human_column]) for r in rows],
        args.trials,
        args.seed,
        args.human_higher_is_better,
        args.encoder,
        args.pooling,
        args.folds,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "affinity_tuned.json").write_text(dumps(result["affinity"], indent=2), encoding="utf-8")
    summary = {k: v for k, v in result.items() if k != "affinity"} | {"encoder": args.encoder, "seed": args.seed}
    (out / "tuning.json").write_text(dumps(summary, indent=2), encoding="utf-8")
    held = result.get("held_out")
    held_text = (
        f"held-out tau-b {held['tuned_tau_b']:.4f} vs {held['default_long_tau_b']:.4f} for the bundled matrix "
        f"({held['folds']}-fold); "
        if held
        else ""
    )
    print(
        f"{held_text}in-sample {result['tau_b']:.4f} (bundled: {result['default_long_tau_b']:.4f}) over"
        f" {result['n_pairs']} pairs, {result['n_trials']} trials -> {out / 'affinity_tuned.json'}"
    )
    return 0


def radpref(args) -> int:
    import platform

    import numpy as np

    from ..radpref import agreement, case_index, load_radpref, majority_preference

    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    if args.metrics and args.baseline not in {k for spec in scorer.specs for k in spec.keys}:
        scorer = build_scorer(argparse.Namespace(**{**vars(args), "metrics": [*args.metrics, args.baseline]}), out, 0)
    candidates = load_radpref(args.data)
    if args.part != "all":
        from ..radpref import split_candidates

        candidates = split_candidates(candidates, args.part)
    result = scorer(
        [c.reference for c in candidates],
        [c.text for c in candidates],
        ids=[f"{c.case_id} {c.name}" for c in candidates],
        # for the metrics that read a patient context (CRIMSON), named as CRIMSON's README names them
        context=[{"Age": c.context.get("PatientAge"), "Indication": c.context.get("Indication")} for c in candidates],
    )
    scores = {}
    for key in result.summary:
        values = np.array([np.nan if row[key] is None else row[key] for row in result.per_sample], dtype=float)
        scores[key] = values if result.higher_is_better[key] else -values
    human = np.array([c.mean_errors() for c in candidates])
    rating = np.array([c.mean_rating() for c in candidates])
    command = ["radmetrics meta-eval radpref", f"--part {args.part}"]
    command += [f"--metrics {' '.join(args.metrics)}"] if args.metrics else []
    command += [f"--components {' '.join(args.components)}"] if args.components else []
    report = {
        "command": " ".join([*command, f"--out {args.out}"]),
        "data": str(args.data or "bundled radpref_dev"),
        "part": args.part,
        "candidates": len(candidates),
        "cases": len(candidates) // 2,
        "human": "minus the mean over 3 raters of finding_errors + missing_findings",
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "baseline": args.baseline,
        "metrics_run": {s.name: s.reference for s in scorer.specs},
        "components": {k: str(v) for k, v in scorer.components.items()},
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "keys": agreement(
            scores,
            human,
            case_index(candidates),
            majority_preference(candidates),
            args.baseline,
            args.bootstrap,
            args.seed,
        ),
        "keys_vs_rating": {
            key: {k: v for k, v in entry.items() if k != "preference"}
            for key, entry in agreement(
                scores,
                -rating,
                case_index(candidates),
                majority_preference(candidates),
                args.baseline,
                args.bootstrap,
                args.seed,
            ).items()
        },
        "signatures": result.signatures,
    }
    _write(out, "agreement.json", report)
    table = agreement_table(report)
    (out / "agreement.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    return 0


def agreement_table(report: dict) -> str:
    import numpy as np

    baseline = report["baseline"]
    lines = [
        f"| score | tau-b | 95% CI (cases) | tau-b - {baseline} [95% CI] | preference accuracy (n) |",
        "|---|---|---|---|---|",
    ]
    ordered = sorted(report["keys"].items(), key=lambda item: -np.nan_to_num(item[1]["tau_b"], nan=-2.0))
    for key, entry in ordered:
        versus = entry.get(f"vs_{baseline}")
        difference = (
            ""
            if not versus
            else (
                "n/a"
                if np.isnan(versus["difference"])
                else f"{versus['difference']:+.3f} [{versus['ci95'][0]:+.3f}, {versus['ci95'][1]:+.3f}]"
            )
        )
        preference = entry["preference"]
        lines.append(
            f"| {key} | {_number(entry['tau_b'])} | {_interval(entry['ci95'])} | {difference} | "
            f"{_number(preference['accuracy'])} ({preference['n']}) |"
        )
    return "\n".join(lines)


def significance(args) -> int:
    import platform

    from ..findings.significance import significance as level_of
    from ..findings.significance_agreement import significance_agreement
    from ..radpref import load_radpref, split_candidates
    from ..signature import version

    out = Path(args.out)
    candidates = split_candidates(load_radpref(), args.part)
    report = {
        "command": f"radmetrics meta-eval significance --part {args.part} --out {args.out}",
        "part": args.part,
        "cases": len(candidates) // 2,
        "radmetrics": version(),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "predictor": "inference/findings/significance.py (word rules from CRIMSON's examples, the patient's age)",
        **significance_agreement(candidates, level_of, args.bootstrap, args.seed),
    }
    _write(out, "significance_agreement.json", report)
    low, high = report["weighted_kappa_ci95"]
    raters = ", ".join(f"{v['weighted_kappa']:.3f}" for v in report["raters"].values())
    print(
        f"{report['items_with_a_majority_level']} items: weighted kappa {report['weighted_kappa']:.3f} "
        f"[{low:.3f}, {high:.3f}], exact {report['exact_agreement']:.3f}; each rater against the other two: {raters}"
    )
    return 0


def findings(args) -> int:
    import platform

    from ..findings.agreement import findings_agreement
    from ..loading.checkpoint import CheckpointError
    from ..metrics.semantic_green.metric import SemanticGreen
    from ..metrics.semantic_green.teacher import SemanticTeacher
    from ..models.text_encoder import TextEncoder
    from ..radpref import load_radpref, split_candidates
    from ..signature import version

    out = Path(args.out)
    if args.extractor not in ("rules", "trained") and not Path(args.extractor).exists():
        raise CheckpointError(f"--extractor {args.extractor}: no such export or run directory (or: trained, rules)")
    try:
        grid = [tuple(float(v) for v in item.split(",")) for item in args.grid or []]
    except ValueError:
        raise SystemExit("radmetrics meta-eval findings: --grid takes STATEMENT,CLAUSE pairs, e.g. 0.5,0.9") from None
    if any(len(pair) != 2 for pair in grid):
        raise SystemExit("radmetrics meta-eval findings: --grid takes STATEMENT,CLAUSE pairs, e.g. 0.5,0.9")
    if grid and args.extractor == "rules":
        raise SystemExit("radmetrics meta-eval findings: --grid needs a trained extractor, not rules")
    encoder = TextEncoder("default")
    extract = findings_extractor(args.extractor, encoder)
    candidates = split_candidates(load_radpref(), args.part)
    findings_rules = SemanticGreen(findings="extractor").teacher(encoder).rules  # the judge semantic_green runs
    report = findings_agreement(
        candidates,
        SemanticTeacher(encoder),
        SemanticTeacher(encoder, findings_rules),
        encoder,
        extract,
        args.bootstrap,
        args.seed,
    )
    points = []
    for statement_threshold, clause_threshold in grid:
        extract.head.statement_threshold, extract.head.clause_threshold = statement_threshold, clause_threshold
        point = findings_agreement(
            candidates, SemanticTeacher(encoder), SemanticTeacher(encoder, findings_rules), encoder, extract, 0
        )
        points.append(
            {
                "statement_threshold": extract.head.statement_threshold,
                "clause_threshold": extract.head.clause_threshold,
                "extraction_f1": point["extraction"]["f1"],
                "extraction_precision": point["extraction"]["precision"],
                "extraction_recall": point["extraction"]["recall"],
                "tau_b_extracted_findings": point["report_tau_b"]["extracted_findings"]["tau_b"],
            }
        )
        print(json.dumps(points[-1]))
    report = {
        "part": args.part,
        "extractor": args.extractor,
        "version": version(),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "command": f"radmetrics meta-eval findings --part {args.part} --extractor {args.extractor}"
        + (f" --grid {' '.join(args.grid)}" if args.grid else ""),
        **report,
        **({"threshold_grid": points} if points else {}),
    }
    _write(out, "findings_agreement.json", report)
    print(findings_table(report))
    return 0


def findings_extractor(name: str, encoder):
    """reports -> findings lists for --extractor: rules, trained (the shipped export), an export, or a
    findings/classifier run directory (its final/ head)."""
    from ..findings.agreement import todays_findings
    from ..findings.extractor import FindingsExtractor, FindingsHead

    if name == "rules":
        return lambda texts: [todays_findings(t) for t in texts]
    if name == "trained":
        return FindingsExtractor.from_export(None, encoder)
    path = Path(name)
    if (path / "final" / "findings_head.json").is_file():
        return FindingsExtractor(FindingsHead.load(path / "final"), encoder)
    return FindingsExtractor.from_export(path, encoder)


def findings_table(report: dict) -> str:
    extraction, judge, taus = report["extraction"], report["judge_on_listed_findings"], report["report_tau_b"]
    lines = [
        f"RadPref {report['part']} ({report['cases']} cases), extractor {report['extractor']}",
        f"extraction: precision {extraction['precision']:.3f}, recall {extraction['recall']:.3f}, "
        f"F1 {extraction['f1']:.3f} ({extraction['recovered']} of {extraction['listed']} listed findings)",
    ]
    for kind in ("false", "missing"):
        entry = judge[kind]["judge_vs_majority"]
        raters = [r["f1"] for r in judge[kind]["raters"].values()]
        lines.append(
            f"judge on listed findings, {kind}: F1 {entry['f1']:.3f}, kappa {entry['kappa']:.3f} "
            f"(rater vs rater F1 {min(raters):.3f}-{max(raters):.3f})"
        )
    for way, entry in taus.items():
        versus = next((v for k, v in entry.items() if k.startswith("vs_")), None)
        extra = f", {versus['difference']:+.3f} {_interval(versus['ci95'])} vs statements" if versus else ""
        lines.append(f"tau-b on {way.replace('_', ' ')}: {entry['tau_b']:.3f} {_interval(entry['ci95'])}{extra}")
    return "\n".join(lines)


def ranking(args) -> int:
    import platform

    from ..ranking import load_suite, pairs, ranking_report, ranking_table
    from ..signature import version

    out = Path(args.out)
    scorer = build_scorer(args, out, n_bootstrap=0)  # checks every option before any file or model loads
    cases = load_suite(args.suite)
    references, candidates, ids = pairs(cases)
    result = scorer(references, candidates, ids=ids)
    oriented = {}
    for key in result.summary:
        sign = 1.0 if result.higher_is_better[key] else -1.0
        oriented[key] = [float("nan") if row[key] is None else sign * row[key] for row in result.per_sample]
    report = {
        "suite": str(args.suite or "bundled clinical ranking suite"),
        "cases": len(cases),
        "version": version(),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "keys": ranking_report(cases, oriented),
        "signatures": result.signatures,
    }
    _write(out, "ranking.json", report)
    table = ranking_table(report["keys"])
    (out / "ranking.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    return 0


def run(args: argparse.Namespace) -> int:
    commands = {
        "findings": findings,
        "significance": significance,
        "ranking": ranking,
        "correlate": correlate,
        "preference": preference,
        "radpref": radpref,
        "fit-radcliq": fit,
        "tune-ratescore": tune,
    }
    return commands[args.meta_command](args)
