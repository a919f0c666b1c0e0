"""How long configs/green/sft/tiny.yaml takes on this machine: 400 training pairs and the final evaluation, from a
tiny stage-1 model (configs/green/pretrain/tiny.yaml, timed apart and reused when --pretrain-out holds a finished
one). A benchmark, not a timed test: the goal (<= 5 minutes on 2 cores for the SFT run with its final evaluation) is
read off the results file, which records the command, the machine, the package versions, each stage's wall time and
the run's agreement with the teacher.

    python benchmarks/green/green_tiny_time.py --out checkpoints/bench_green_tiny_time
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine, write_results  # noqa: E402

GOAL_S = 300


def main() -> None:
    from importlib.metadata import version

    from radmetrics.training.common.run_dir import RUN_MANIFEST, is_complete, read_eval_results
    from radmetrics.training.recipes import load_recipe

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="checkpoints/bench_green_tiny_time")
    parser.add_argument("--pretrain-out", help="stage-1 run directory (default OUT/pretrain); reused when complete")
    parser.add_argument(
        "--pretrain-args", default="", help="extra green/pretrain arguments, one string (e.g. --num_train_epochs 1)"
    )
    parser.add_argument("--results", default="green_tiny_time.json", help="file name under benchmarks/results/")
    parser.add_argument("--note", default="", help="what else ran on the machine (it is shared or not)")
    args = parser.parse_args()
    out = Path(args.out)
    pretrain_dir = Path(args.pretrain_out or out / "pretrain")
    timings = {}
    start = time.perf_counter()
    if not is_complete(pretrain_dir / "final"):
        config = str(REPO / "configs/green/pretrain/tiny.yaml")
        pretrain_args = ["--config", config, "--output_dir", str(pretrain_dir), *shlex.split(args.pretrain_args)]
        load_recipe("green/pretrain").main(pretrain_args)
        timings["pretrain_s"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    sft_args = ["--config", str(REPO / "configs/green/sft/tiny.yaml"), "--output_dir", str(out / "sft")]
    sft = load_recipe("green/sft").main([*sft_args, "--model_name_or_path", str(pretrain_dir / "final")])
    timings["sft_with_final_evaluation_s"] = round(time.perf_counter() - start, 1)
    results = read_eval_results(sft)
    manifest = json.loads((sft / RUN_MANIFEST).read_text())
    write_results(
        args.results,
        {
            "question": "green/sft tiny, 400 training pairs and its final evaluation, in 5 minutes on 2 cores?",
            "command": "python " + " ".join(sys.argv),
            "machine": machine(),
            "versions": {name: version(name) for name in ("torch", "transformers", "trl", "radmetrics")},
            "note": args.note,
            "pretrain_args": args.pretrain_args,
            "goal_s": GOAL_S,
            "timings": timings,
            "within_goal": timings["sft_with_final_evaluation_s"] <= GOAL_S,
            "data": {k: v for k, v in manifest["data_provenance"].items() if k.endswith(("pairs", "length"))},
            "final_evaluation": {k: v for k, v in results.items() if k.startswith("test_")},
        },
    )


if __name__ == "__main__":
    main()
