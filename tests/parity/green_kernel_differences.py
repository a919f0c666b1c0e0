"""How far float kernels move the released GREEN look-alike's logits: the measurement behind parity/green_parity.py's
`GREEN_ULPS`.

`record` follows the reference's answers to a batch of parity pairs (parity/green_parity.py, so every run sees the
same token ids at every step) and saves the logits of every `--every`-th step; run it once per kernel setting (the
environment variables of tests/run_under_each_isa.sh). `compare` prints, for each recorded run against the first, the
largest difference of a logit, in float32 units in the last place of its step's largest logit, and the near ties and
smallest margins each run met.

    ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 python tests/parity/green_kernel_differences.py \
        record /tmp/avx2.pt --first 24
    python tests/parity/green_kernel_differences.py compare /tmp/avx2.pt /tmp/avx512.pt ...
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path[:0] = [str(Path(__file__).resolve().parents[1])]


def record(out: Path, first: int, every: int) -> None:
    import torch

    from parity import lookalikes
    from parity.green_parity import BATCH, follow_released_green
    from radmetrics.inference.files.atomic import atomic_write

    steps: list[torch.Tensor] = []

    def keep(logits: torch.Tensor) -> torch.Tensor:
        steps.append(logits.clone() if len(steps) % every == 0 else torch.empty(0))
        return logits

    with tempfile.TemporaryDirectory() as work:
        root = lookalikes.build(Path(work) / "lookalikes")
        found = follow_released_green(root, range(first, first + BATCH), perturb=keep)
    setting = {k: os.environ.get(k) for k in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")}
    kept = {step: logits for step, logits in enumerate(steps) if logits.numel()}
    result = {k: found[k] for k in ("mismatches", "near_ties", "margins", "steps")}
    with atomic_write(out, "wb") as fh:
        torch.save({"setting": setting, "first": first, "logits": kept, "found": result}, fh)
    print(setting, result["mismatches"], result["near_ties"], min(result["margins"].values()))


def compare(paths: list[Path]) -> None:
    import torch

    from parity.decoding import last_place

    runs = [torch.load(path) for path in paths]
    for path, run in zip(paths, runs):
        found = run["found"]
        small = sorted(found["margins"].items(), key=lambda item: item[1])[:3]
        print(f"{path}: {run['setting']} near ties {found['near_ties']}, smallest margins {small}")
        if run is runs[0]:
            continue
        largest = 0.0
        for step, logits in run["logits"].items():
            base = runs[0]["logits"][step]
            for row in range(base.shape[0]):
                unit = last_place(base[row], torch.float32)
                largest = max(largest, float((logits[row] - base[row]).abs().max()) / unit)
        print(f"  largest difference from {paths[0]}: {largest:.1f} float32 last places")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record")
    recording.add_argument("out", type=Path)
    recording.add_argument("--first", type=int, default=24, help="the batch's first pair (a multiple of 8)")
    recording.add_argument("--every", type=int, default=50)
    comparing = commands.add_parser("compare")
    comparing.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.first, args.every)
    else:
        compare(args.runs)


if __name__ == "__main__":
    main()
