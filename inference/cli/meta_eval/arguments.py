"""The arguments of each `radmetrics meta-eval` subcommand (light: the subcommands' modules load when one runs)."""

from __future__ import annotations

from ...files.output_paths import OutputFile, OutputFolder
from ..score import add_scoring_arguments


def add_part(parser, default: str) -> None:
    """--part: which part of the frozen split of RadPref's bundled half a subcommand reads."""
    parser.add_argument(
        "--part",
        choices=["develop", "frozen", "all"],
        default=default,
        help="the part of the frozen split of the bundled half (develop: 30 cases; frozen: 20, now read; all: 50)",
    )


def add_correlate(sub) -> None:
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
    corr.add_argument("--out", required=True, type=OutputFolder)


def add_preference(sub) -> None:
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
    pref.add_argument("--out", required=True, type=OutputFolder)


def add_radpref(sub) -> None:
    radpref = sub.add_parser(
        "radpref", help="agreement of every metric with radiologists on RadPref's development half"
    )
    radpref.add_argument(
        "--data", help="a RadPref folder (preference_data.json, user_*.json; default: the bundled half)"
    )
    radpref.add_argument("--baseline", default="rougeL", help="the key every other key's tau-b is compared with")
    add_part(radpref, "all")
    add_scoring_arguments(radpref)
    radpref.add_argument("--out", required=True, type=OutputFolder)


def add_significance(sub) -> None:
    significance = sub.add_parser(
        "significance", help="clinical significance per finding against RadPref's raters (weighted kappa)"
    )
    add_part(significance, "develop")
    significance.add_argument("--bootstrap", type=int, default=1000, help="case bootstrap resamples for the interval")
    significance.add_argument("--seed", type=int, default=0)
    significance.add_argument("--out", required=True, type=OutputFolder)


def add_findings(sub) -> None:
    findings = sub.add_parser("findings", help="finding-level agreement with RadPref's raters, stage by stage")
    add_part(findings, "develop")
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
    findings.add_argument(
        "--hedged",
        action="store_true",
        help="a trained extractor keeps hedged findings ('pneumonia cannot be excluded'), as semantic_green's "
        "judge=model extracts them",
    )
    findings.add_argument("--bootstrap", type=int, default=1000, help="case bootstrap resamples for the intervals")
    findings.add_argument("--seed", type=int, default=0)
    findings.add_argument("--out", required=True, type=OutputFolder)


def add_ranking(sub) -> None:
    ranking = sub.add_parser("ranking", help="how each metric orders candidates on the clinical ranking suite")
    ranking.add_argument("--suite", help="a suite JSONL file (default: the bundled clinical ranking suite)")
    add_scoring_arguments(ranking)
    ranking.add_argument("--out", required=True, type=OutputFolder)


def add_fit_radcliq(sub) -> None:
    fit = sub.add_parser("fit-radcliq", help="refit the RadCliQ-v1 composite on human error counts (CVXPY)")
    fit.add_argument("--csv", required=True)
    fit.add_argument("--human-column", default="total_errors")
    fit.add_argument("--folds", type=int, default=5, help="cross-validation folds for the held-out tau (0: none)")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", required=True, type=OutputFile, help="JSON file for the fitted constants")


def add_tune_ratescore(sub) -> None:
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
    tune.add_argument(
        "--out", required=True, type=OutputFolder, help="output directory (affinity_tuned.json, tuning.json)"
    )
