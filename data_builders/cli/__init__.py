"""`radmetrics data ...`: build corpora and training data. One module per subcommand, imported when the parser is
built (they import nothing heavy at the top) and run by name; each only parses and prints: the loops, readers and
writers live in the library (corpus/, pairs/, silver/, labels/, judge_pairs/, findings.py)."""

from __future__ import annotations

import argparse

from ..judge_pairs import command as judge_pairs
from ..labels.import_command import add_import_parser
from . import annotate, corpus, findings, inject_errors, pairs, pretrain_corpus, silver
from .arguments import add_corpus_arguments, corpus_and_splits, corpus_provenance

HELP = "build corpora and training data: corpus, GREEN pairs + teacher, pretraining text, silver labels"
DESCRIPTION = """Build data for the recipes. Subcommands:

  corpus   read a corpus (IU X-ray bundled by default, ReXrank JSON, MIMIC-style free text,
           CSV/JSONL with configurable columns), assign deterministic splits, write reports.jsonl

  Splits (--split-by text, the default) group reports by normalised text, so no held-out report repeats a
  train report; corpus_stats.json (data corpus), every other stats.json and card record the overlap between splits
  (reports and sentences).

  pairs    reference/candidate pairs by the five GREEN heuristics, each with an edit log and a
           programmatic GREEN annotation; JSONL + HF dataset + dataset card

  inject-errors    LLM-written candidates (GREEN appendix A.4): sampled error categories, or a rephrasing
  annotate         GREEN annotations of any pairs (CSV or JSONL; split by reference report with a leakage check
                   into train/validation/test.jsonl, which green/sft and crimson/sft read as they are): by the
                   semantic teacher (semantic_green: sentence matching and
                   word rules that agree with radiologists, no LLM), or by an LLM teacher (appendix A.1, --endpoint),
                   validated by the GREEN parser and resumable (answers are cached; a rerun re-sends nothing answered);
                   --format crimson: CRIMSON's prompt and JSON answer from the LLM teacher, for crimson/sft

  pairs and annotate write their records in chunks (--chunk-size) to OUT/records.stream.jsonl as they go: the same
  command run again after a kill resumes after the last complete chunk and says from where; a folder holding a
  finished run, or a run of other inputs or options, is refused unless --overwrite.

  pretrain-corpus  de-duplicated findings + impression text as an HF dataset (GREEN stage-1 pretraining)

  silver   silver labels for the encoder recipes: CheXpert-style rule labels, RaTE-NER (IOB + spans),
           RadGraph-style entities and relations (DyGIE JSONL); card with label distributions and
           agreement with real gold (NegBio labels; radgraph annotations, in-sample for the RadGraph lexicon)

  judge-pairs  (reference finding, candidate finding, label) for the finding-pair judge (judge/pairs): same,
           attribute errors with their attribute and significance, contradictions, unrelated; from logged edits

  findings silver labels for the findings extractor: every statement and clause of the IU X-ray reports, a finding
           or not by its alignment with NLM's manual MeSH codes of that report (never RadPref); split by text

Examples: radmetrics data corpus --kind iu_xray --out outputs/corpus
          radmetrics data pairs --out outputs/pairs --per-heuristic 2000
          radmetrics data silver --out outputs/silver --labelers chexpert rate_ner radgraph
          radmetrics data annotate --pairs my_pairs.csv --out outputs/teacher            (semantic teacher, no LLM)
          radmetrics data annotate --pairs outputs/pairs/train.jsonl --endpoint configs/llm/openai_gpt4o.yaml --out \\
outputs/teacher
          radmetrics data annotate --format crimson --pairs outputs/pairs/*.jsonl --endpoint \\
configs/llm/openai_gpt4o.yaml --out outputs/crimson_teacher"""

# subcommand -> its module (HELP, add_parser(sub), run(args)), in the order of the help
SUBCOMMANDS = {
    "corpus": corpus,
    "pairs": pairs,
    "inject-errors": inject_errors,
    "annotate": annotate,
    "pretrain-corpus": pretrain_corpus,
    "silver": silver,
    "findings": findings,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="data_command", metavar="WHAT", required=True)
    for module in SUBCOMMANDS.values():
        module.add_parser(sub)
    add_import_parser(sub)  # runs as its own command (`_run`)
    judge_pairs.register(sub, add_corpus_arguments)  # runs through `data_handler`


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require

    require(
        "datasets", extra="train", for_what=f"radmetrics data {args.data_command} (it writes Hugging Face datasets)"
    )
    if getattr(args, "data_handler", None):  # a subcommand in a module of its own (judge_pairs/command.py)
        return args.data_handler(args, corpus_and_splits, corpus_provenance)
    return SUBCOMMANDS[args.data_command].run(args)
