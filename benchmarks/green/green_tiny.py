"""The tiny two-stage GREEN run on CPU: stage-1 pretraining from scratch on the bundled IU corpus, then SFT on
programmatic-teacher pairs, and agreement with the teacher on held-out pairs (parse rate, MAE of the significant
error count and of matched findings, each with a 95% bootstrap interval, and a paired bootstrap of each MAE against
the constant-prediction baseline).

Settings are chosen on the validation split alone (`--final_eval_splits validation`, each variant into its own
results file); the chosen settings go into the tiny configs, and the plain command reports test once:

    python benchmarks/green/green_tiny.py --out checkpoints/bench_green_tiny          # tiny.yaml: validation and test
    python benchmarks/green/green_tiny.py --out checkpoints/bench_green_v480 --pretrain-out \\
        checkpoints/bench_green_tiny/pretrain \\
        --results benchmarks/results/green_tiny_validation/sft480_lr3e-3.json -- --num_train_epochs 2
        --final_eval_splits validation
    python benchmarks/green/green_tiny.py --out checkpoints/bench_green_p2 --pretrain-args "--num_train_epochs 2" \\
        --results benchmarks/results/green_tiny_validation/pretrain2.json -- --final_eval_splits validation

A finished stage 1 in --pretrain-out is reused, not retrained. Writes the results file (default
benchmarks/results/green_tiny.json) with the machine it ran on, the wall time of each stage and the SFT run's
per-epoch evaluations.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def evaluation_history(run_dir: Path) -> list[dict]:
    """The evaluations logged during training (validation loss; GREEN agreement on `generation_eval_samples`
    validation pairs), from the newest complete checkpoint's trainer state."""
    from radmetrics.training.common.run_dir import last_complete_checkpoint

    checkpoint = last_complete_checkpoint(run_dir)
    if checkpoint is None or not (checkpoint / "trainer_state.json").is_file():
        return []
    history = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))["log_history"]
    return [entry for entry in history if any(key.startswith("eval_") for key in entry)]


def main() -> None:
    import torch

    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.recipes import load_recipe

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="checkpoints/bench_green_tiny")
    parser.add_argument("--pretrain-out", help="stage-1 run directory (default OUT/pretrain); reused when complete")
    parser.add_argument("--pretrain-args", default="", help="extra green/pretrain recipe arguments, one string")
    parser.add_argument("--results", default=str(ROOT / "benchmarks" / "results" / "green_tiny.json"))
    parser.add_argument("sft_overrides", nargs=argparse.REMAINDER, help="after --: extra green/sft recipe arguments")
    args = parser.parse_args()
    args.sft_overrides = args.sft_overrides[1:] if args.sft_overrides[:1] == ["--"] else args.sft_overrides
    out = Path(args.out)
    timings = {}
    start = time.perf_counter()
    pretrain = load_recipe("green/pretrain").main(
        [
            "--config",
            str(ROOT / "configs/green/pretrain/tiny.yaml"),
            "--output_dir",
            args.pretrain_out or str(out / "pretrain"),
            *shlex.split(args.pretrain_args),
        ]
    )
    timings["pretrain_s"] = time.perf_counter() - start
    start = time.perf_counter()
    sft = load_recipe("green/sft").main(
        [
            "--config",
            str(ROOT / "configs/green/sft/tiny.yaml"),
            "--output_dir",
            str(out / "sft"),
            "--model_name_or_path",
            str(pretrain / "final"),
            *args.sft_overrides,
        ]
    )
    timings["sft_s"] = time.perf_counter() - start
    results = {
        "pretrain": read_eval_results(pretrain),
        "sft": read_eval_results(sft),
        "sft_evaluations": evaluation_history(sft),
        "timings": timings,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
        },
        "pretrain_args": args.pretrain_args,
        "sft_overrides": args.sft_overrides,
    }
    target = Path(args.results)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
