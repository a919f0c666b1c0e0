"""`radmetrics meta-eval ...`: how well metrics agree with radiologists. One module per subcommand, loaded when it
runs; the statistics and tables live in radmetrics.inference.meta_evaluation."""

from __future__ import annotations

import argparse
import importlib

from . import arguments

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
               each rater against the level the other two agree on. --part develop (default), frozen (read since) or
               all. Writes OUT/significance_agreement.json.

  findings     where semantic_green loses agreement on RadPref, stage by stage, on one part of its frozen split
               (--part develop, 30 cases; frozen, 20 cases, read since; or all 50): the extractor's findings
               against RadPref's listed findings (precision, recall, F1, one to one at MiniLM cosine >= 0.6); the judge
               given the listed findings (false and missing findings against the raters' majority, F1 and kappa,
               beside each pair of raters); and report-level tau-b on the full reports, on the extracted findings and
               on the listed findings, with case-bootstrap intervals and paired differences. --extractor trained (the
               shipped findings extractor, the default), an export or run directory, or rules (the statement filter);
               --hedged keeps hedged findings, as semantic_green's judge=model extracts them.
               Writes OUT/findings_agreement.json.
  ranking      the clinical ranking suite (bundled: 85 cases in 16 categories, each a reference and 2-4 candidates
               best first): per score key, how often the metric orders two candidates as expected (pairwise accuracy,
               a tie half) over all cases and per category, with a 95% interval that resamples cases (--bootstrap,
               --seed; the same draws for every key), and the share of cases ordered exactly. --suite FILE runs
               another suite (JSONL: id, category, reference, candidates best first). Writes OUT/ranking.json and
               OUT/ranking.md.

correlate, preference, radpref and ranking score with the same --metrics, --components, --option and --endpoint as \
`radmetrics score`."""


# subcommand -> (its arguments, its module)
SUBCOMMANDS = {
    "correlate": (arguments.add_correlate, "correlate"),
    "preference": (arguments.add_preference, "preference"),
    "radpref": (arguments.add_radpref, "radpref"),
    "significance": (arguments.add_significance, "significance"),
    "findings": (arguments.add_findings, "findings"),
    "ranking": (arguments.add_ranking, "ranking"),
    "fit-radcliq": (arguments.add_fit_radcliq, "fit_radcliq"),
    "tune-ratescore": (arguments.add_tune_ratescore, "tune_ratescore"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="meta_command", metavar="WHAT", required=True)
    for add, _ in SUBCOMMANDS.values():
        add(sub)


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f".{SUBCOMMANDS[args.meta_command][1]}", __name__)
    return module.run(args)
