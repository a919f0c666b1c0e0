"""`radmetrics weights list`, `radmetrics weights convert SRC --kind KIND --out DIR` and `radmetrics weights verify
DIR`."""

from __future__ import annotations

import argparse

from radmetrics.inference.files.output_paths import NewOutputFolder

HELP = "the metric authors' released weights: list them, convert one into the export contract"
DESCRIPTION = """list     every known released artefact: name, kind, Hub repository and file, size, licence, the \
metrics
         that use it, the package whose behaviour radmetrics reproduces with it, and whether it is in the local
         Hugging Face cache.
convert  SRC (a local path or a name from `list`) of --kind chexbert|radgraph|rate_ner|green into a directory
         loadable with from_pretrained plus a radmetrics.json manifest recording the source, revision, sha256
         and licence. Scoring with the result (`--components DIR`) gives the same values as with SRC.
verify   DIR (an export or a conversion; a path or Hub id): hash every file against its radmetrics.json. Loading checks
         the hashes only for a newly downloaded Hub snapshot; this checks a local directory on demand.

Released weights can also be scored directly: radmetrics score --components KIND=PATH ... or --components released."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="weights_command", metavar="WHAT", required=True)
    sub.add_parser("list", help="list the known released artefacts")
    convert = sub.add_parser("convert", help="convert a released artefact into radmetrics' export contract")
    convert.add_argument("src", help="a path (chexbert.pth, a RadGraph tarball, a model folder) or a name from `list`")
    convert.add_argument("--kind", required=True, choices=["chexbert", "radgraph", "rate_ner", "green"])
    convert.add_argument("--out", required=True, type=NewOutputFolder, help="new (or empty) output directory")
    convert.add_argument("--revision", help="Hub revision, when SRC is a name")
    verify = sub.add_parser("verify", help="check every file of an exported checkpoint against its manifest's sha256")
    verify.add_argument("directory", help="an exported or converted checkpoint (a path or Hub repo id)")
    verify.add_argument("--revision", help="Hub revision, when DIRECTORY is a repo id")
    convert.add_argument(
        "--base-model",
        help=(
            "chexbert/radgraph: the transformer's config+tokenizer folder (default: the Hub id "
            "the reference loads, from the cache); rate_ner: the entity encoder folder"
        ),
    )


def _cached(artefact) -> str:
    from huggingface_hub import snapshot_download, try_to_load_from_cache

    if artefact.filename:
        return "yes" if isinstance(try_to_load_from_cache(artefact.repo_id, artefact.filename), str) else "no"
    try:
        snapshot_download(artefact.repo_id, local_files_only=True)
        return "yes"
    except Exception:  # not in the cache (huggingface_hub raises several types)
        return "no"


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.released import ARTEFACTS

    if args.weights_command == "list":
        print("| name | kind | Hub repository / file | size | licence | metrics | reproduces | cached |")
        print("|---|---|---|---|---|---|---|---|")
        for a in ARTEFACTS.values():
            where = f"{a.repo_id} / {a.filename}" if a.filename else a.repo_id
            print(
                f"| {a.name} | {a.kind} | {where} | {a.size} | {a.licence} | {', '.join(a.metrics)} | {a.reference} |"
                f" {_cached(a)} |"
            )
        return 0
    if args.weights_command == "verify":
        from radmetrics.inference.loading.checkpoint import (
            CheckpointError,
            load_manifest,
            manifest_component,
            resolve_checkpoint,
        )

        directory = resolve_checkpoint(args.directory, args.revision)
        component = manifest_component(directory)
        if component is None:
            raise CheckpointError(f"{directory} has no radmetrics.json: not an export")
        _, manifest = load_manifest(directory, component, verify_checksums=True)
        print(f"{directory}: {len(manifest['files'])} files match their sha256 ({component})")
        return 0
    from ..weights import convert

    out = convert(args.src, args.kind, args.out, args.revision, args.base_model)
    print(f"converted {args.src} -> {out}")
    return 0
