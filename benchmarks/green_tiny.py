"""The tiny two-stage GREEN run on CPU: stage-1 pretraining from scratch on the bundled IU corpus, then SFT on
programmatic-teacher pairs, and agreement with the teacher on held-out test pairs (parse rate, MAE of the
significant error count and of matched findings, each next to the constant-prediction baseline).

    python benchmarks/green_tiny.py --out checkpoints/bench_green_tiny
    python benchmarks/green_tiny.py --out checkpoints/bench_green_lr -- --learning_rate 0.003   # SFT overrides

Writes benchmarks/results/green_tiny.json (with the machine it ran on and the wall time of each stage).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from radmetrics.training.recipes import load_recipe
    from radmetrics.training.run_dir import read_eval_results

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="checkpoints/bench_green_tiny")
    parser.add_argument("sft_overrides", nargs=argparse.REMAINDER, help="after --: extra green/sft recipe arguments")
    args = parser.parse_args()
    args.sft_overrides = args.sft_overrides[1:] if args.sft_overrides[:1] == ["--"] else args.sft_overrides
    out = Path(args.out)
    timings = {}
    start = time.perf_counter()
    pretrain = load_recipe("green/pretrain").main(["--config", str(ROOT / "configs/green/pretrain/tiny.yaml"), "--output_dir", str(out / "pretrain")])
    timings["pretrain_s"] = time.perf_counter() - start
    start = time.perf_counter()
    sft = load_recipe("green/sft").main(["--config", str(ROOT / "configs/green/sft/tiny.yaml"), "--output_dir", str(out / "sft"),
                                         "--model_name_or_path", str(pretrain / "final"), *args.sft_overrides])
    timings["sft_s"] = time.perf_counter() - start
    results = {"pretrain": read_eval_results(pretrain), "sft": read_eval_results(sft), "timings": timings,
               "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                           "cpus": os.cpu_count()}, "sft_overrides": args.sft_overrides}
    target = ROOT / "benchmarks" / "results" / "green_tiny.json"
    target.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
