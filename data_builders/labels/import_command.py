"""`radmetrics data import FORMAT FILE... --out DIR`: a user's labels in one of the field's formats -> what the encoder
recipes read (importer.py). Registered in data_builders/cli/ by `add_import_parser`; runs as its own command."""

from __future__ import annotations

import argparse
import json

from radmetrics.inference.files.output_paths import OutputFolder

# The formats importer.FORMATS reads (named here so that building the CLI's parser imports no reader).
FORMAT_NAMES = ("conll", "token-jsonl", "radgraph-json", "brat", "chexpert-csv")

HELP = "import your own labels (CoNLL, token JSONL, RadGraph JSON, BRAT, CheXpert-style CSV) for the encoder recipes"
DESCRIPTION = """Check a user's label files record by record and write them as the recipes read them (DIR/<labeler>/),
split by report, with the label set and a dataset card. Every bad record is named by file and line and the files are
refused (exit 2) unless --drop-bad. Formats and their recipes:

  conll          CoNLL tokens and IOB/IOB2 tags, -DOCSTART- REPORT_ID per report  -> rate_ner/iob, rate_ner/span
  token-jsonl    {"tokens", "ner_tags"} or {"tokens", "spans"} or {"text", "spans" (characters)}  -> rate_ner/*
  radgraph-json  RadGraph's JSON (text, entities with start_ix/end_ix/relations)  -> radgraph/train
  brat           BRAT standoff: NAME.ann beside NAME.txt (files or folders)        -> radgraph/train
  chexpert-csv   report text + the 14 CheXpert observations (1 / 0 / -1 / blank)   -> chexbert/finetune

Example: radmetrics data import conll my_labels.conll --out data/my_ner
         radmetrics train rate_ner/iob --config configs/rate_ner/iob/tiny.yaml --silver_dir data/my_ner
See docs/bring-your-own-labels.md."""


def add_import_parser(sub) -> None:
    """The `import` subcommand on `radmetrics data`'s subparsers; it runs `run_import`."""
    p = sub.add_parser(
        "import", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("format", choices=FORMAT_NAMES, help="the files' format")
    p.add_argument("files", nargs="+", metavar="FILE", help="label files (BRAT: .ann files or folders)")
    p.add_argument(
        "--out", required=True, type=OutputFolder, help="output folder (give it to a recipe as --silver_dir)"
    )
    p.add_argument(
        "--file-splits",
        nargs="+",
        metavar="SPLIT",
        help="the split of each FILE, in order (train / validation / test); default: each record's 'split', else "
        "80/10/10 by report text",
    )
    p.add_argument("--labels", nargs="+", metavar="LABEL", help="the entity labels allowed (default: the schema's)")
    p.add_argument(
        "--labels-from-data", action="store_true", help="train the label set the data holds (e.g. a sixth entity type)"
    )
    p.add_argument("--drop-bad", action="store_true", help="leave bad records out (counted in stats.json and card)")
    p.add_argument(
        "--allow-leakage", action="store_true", help="keep held-out reports that repeat train reports word for word"
    )
    p.add_argument("--split-ratios", nargs=3, type=float, default=(0.8, 0.1, 0.1), metavar=("TRAIN", "VAL", "TEST"))
    p.add_argument("--seed", type=int, default=0, help="seed of the split by report text")
    p.set_defaults(_run=run_import)


def run_import(args: argparse.Namespace) -> int:
    from radmetrics.inference.files.output_paths import ensure_output_dir

    from .importer import ImportOptions, import_labels

    out = ensure_output_dir(args.out, what="--out")
    options = ImportOptions(
        args.format,
        args.files,
        args.file_splits,
        args.labels,
        args.labels_from_data,
        args.drop_bad,
        args.allow_leakage,
        tuple(args.split_ratios),
        args.seed,
    )
    stats = import_labels(options, out)
    print(json.dumps({k: stats[k] for k in ("labeler", "records_per_split", "label_set", "dropped")}, indent=2))
    print(f"train with --silver_dir {out} ({stats['recipes']}); dataset card: {out}/README.md")
    return 0
