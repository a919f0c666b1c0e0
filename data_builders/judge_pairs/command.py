"""`radmetrics data judge-pairs --out DIR`: the finding-pair judge's training pairs (build.py) from the bundled IU
X-ray corpus or any corpus `radmetrics data corpus` reads, written as {train,validation,test}.jsonl, stats.json and a
dataset card README.md."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from radmetrics.inference.files.atomic import write_text
from radmetrics.inference.files.output_paths import OutputFolder, ensure_output_dir

from ..cli.arguments import positive_int
from .build import SCHEMA_VERSION, SPLITS, build_judge_pairs, pair_statistics

HELP = "finding pairs for the finding-pair judge: same, attribute errors, contradictions, unrelated"


def register(sub, add_corpus_arguments) -> None:
    """Add the `judge-pairs` subcommand to `radmetrics data`'s subparsers (`add_corpus_arguments`: the corpus options
    every data command takes)."""
    parser = sub.add_parser("judge-pairs", help=HELP, description=__doc__)
    add_corpus_arguments(parser)
    parser.add_argument(
        "--per-label",
        type=positive_int,
        default=1500,
        help="at most this many training pairs per label (an eighth held out)",
    )
    parser.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    parser.set_defaults(data_handler=run)


def write_judge_pairs(pairs_by_split: dict, out: Path, provenance: dict) -> dict:
    """{split}.jsonl, stats.json and README.md under `out`, each published whole."""
    for split in SPLITS:
        lines = "".join(json.dumps(p.to_dict()) + "\n" for p in pairs_by_split.get(split, []))
        write_text(out / f"{split}.jsonl", lines)
    stats = {"schema_version": SCHEMA_VERSION, **pair_statistics(pairs_by_split), "provenance": provenance}
    write_text(out / "stats.json", json.dumps(stats, indent=2))
    write_text(out / "README.md", dataset_card(stats))
    return stats


def dataset_card(stats: dict) -> str:
    labels = sorted({label for split in stats["per_label"].values() for label in split})
    rows = "\n".join(
        f"| {label} | " + " | ".join(str(stats["per_label"][s].get(label, 0)) for s in SPLITS) + " |"
        for label in labels
    )
    return (
        "# Finding-pair judge training pairs\n\n"
        "(reference finding, candidate finding, label) built by `radmetrics data judge-pairs` from "
        f"{stats['provenance']['corpus']} ({stats['provenance']['path']}), split by report text "
        f"({stats['provenance']['split_by']}); labels of inference/findings/judge_labels.py, from logged edits "
        "(data_builders/judge_pairs/). Synthetic (templated) sized lesions and device tips: "
        f"{stats['synthetic']}. No RadPref text.\n\n"
        f"| label | {' | '.join(SPLITS)} |\n|---|---|---|---|\n{rows}\n"
    )


def run(args: argparse.Namespace, corpus_and_splits, corpus_provenance) -> int:
    """`corpus_and_splits(args)` and `corpus_provenance(args)`: `radmetrics data`'s corpus reading."""
    out = ensure_output_dir(args.out, what="--out")
    reports, splits = corpus_and_splits(args)
    pairs = build_judge_pairs(reports, splits, args.per_label, args.seed)
    stats = write_judge_pairs(pairs, out, {**corpus_provenance(args), "seed": args.seed, "per_label": args.per_label})
    print(json.dumps(stats["pairs"], indent=2))
    return 0
