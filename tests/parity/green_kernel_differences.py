"""How far float kernels move the released GREEN look-alike's logits: the measurement behind parity/green_parity.py's
`GREEN_ULPS`.

`record` computes, for a batch of parity pairs, the logits of every `--every`-th step of the reference's answers
(tests/data/released/green_answer_ids.json) as `generate` computes them without a cache: one forward pass over the
left-padded prompts and the answers' first tokens, positions from the attention mask, the last position's logits; so
every run sees the same token ids. Run it once per kernel setting (the environment variables of
tests/run_under_each_isa.sh). `compare` prints, for each recorded run against the first, the largest difference of a
logit, in float32 units in the last place of its step's largest logit.

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
    from parity.green_parity import BATCH, GREEN, answer_ids
    from parity.reports import parity_pairs
    from radmetrics.inference.files.atomic import atomic_write
    from radmetrics.inference.metrics.green.released import ReleasedGreen

    pairs = range(first, first + BATCH)
    references, candidates = ([texts[i] for i in pairs] for texts in parity_pairs())
    answers = torch.tensor([answer_ids()[i] for i in pairs])
    with tempfile.TemporaryDirectory() as work:
        green = ReleasedGreen(str(lookalikes.snapshot(lookalikes.build(Path(work) / "lookalikes"), GREEN)))
    prompts = green.tokenizer(green.texts(references, candidates), return_tensors="pt", padding=True)
    kept = {}
    for step in range(0, answers.shape[1], every):
        ids = torch.cat([prompts["input_ids"], answers[:, :step]], dim=1)
        mask = torch.cat([prompts["attention_mask"], torch.ones_like(answers[:, :step])], dim=1)
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        with torch.no_grad():
            output = green.model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1)
        kept[step] = output.logits[:, -1].clone()
    setting = {k: os.environ.get(k) for k in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")}
    with atomic_write(out, "wb") as fh:
        torch.save({"setting": setting, "first": first, "logits": kept}, fh)
    print(setting, f"{len(kept)} steps recorded")


def compare(paths: list[Path]) -> None:
    import torch

    from parity.decoding import last_place

    runs = [torch.load(path) for path in paths]
    for path, run in zip(paths[1:], runs[1:]):
        largest = 0.0
        for step, logits in run["logits"].items():
            base = runs[0]["logits"][step]
            for row in range(base.shape[0]):
                unit = last_place(base[row], torch.float32)
                largest = max(largest, float((logits[row] - base[row]).abs().max()) / unit)
        print(f"{path} {run['setting']}: at most {largest:.2f} float32 last places from {runs[0]['setting']}")


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
