"""`radmetrics export RUN_DIR --out DIR [--push-to-hub REPO --revision REV]`."""

from __future__ import annotations

import argparse

from radmetrics.inference.files.output_paths import NewOutputFolder

HELP = "export a training run as a from_pretrained directory + radmetrics.json manifest + model card"
DESCRIPTION = """Export the newest complete model of a run (final/ if the run finished, else the last
checkpoint-<step> with a .complete marker). Weights are written as safetensors only; the manifest
records component, schema version, label map, sha256 of every file, training config, eval results
and data provenance; the model card names the base model's Hub id and a licence. With --push-to-hub the export is
uploaded (one --revision branch per run) to a private repository unless --public is given."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a run directory written by `radmetrics train`")
    parser.add_argument("--out", required=True, type=NewOutputFolder, help="new (or empty) export directory")
    parser.add_argument("--push-to-hub", metavar="REPO", help="also upload to this Hugging Face Hub repo id")
    parser.add_argument("--revision", help="Hub branch to upload to (created if missing), e.g. the run name")
    parser.add_argument(
        "--public",
        action="store_true",
        help="create the Hub repo as public (default: private; clinical training data may forbid sharing)",
    )
    parser.add_argument(
        "--license", help="Hub licence id for the card (default: the base model's, when radmetrics knows it)"
    )


def run(args: argparse.Namespace) -> int:
    from ..export import export_run

    out = export_run(
        args.run_dir,
        args.out,
        push_to_hub=args.push_to_hub,
        revision=args.revision,
        private=not args.public,
        license=args.license,
    )
    print(f"exported {args.run_dir} -> {out}")
    return 0
