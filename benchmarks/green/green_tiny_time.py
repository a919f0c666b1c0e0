"""How long configs/green/sft/tiny.yaml takes on this machine: 400 training pairs and the final evaluation, from a
tiny stage-1 model (configs/green/pretrain/tiny.yaml, timed apart and reused when --pretrain-out holds a finished
one). A benchmark, not a timed test: the goal (<= 5 minutes on 2 cores for the SFT run with its final evaluation) is
read off the results file, which records the command, the machine, the package versions, each stage's wall time
beside its process CPU time (user + sys: what the run itself cost, which the machine's other load does not stretch
as it stretches wall time), the load average at the start and end, and the run's agreement with the teacher.
`--recipe crimson` times configs/crimson/sft/tiny.yaml the same way (no stage 1).

    python benchmarks/green/green_tiny_time.py --out checkpoints/bench_green_tiny_time
    python benchmarks/green/green_tiny_time.py --recipe crimson --out checkpoints/bench_crimson_tiny_time
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine, write_results  # noqa: E402

GOAL_S = 300
CORES = 2


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(name: str, timings: dict, run):
    """run() with its wall and CPU seconds and the 1-minute load average before and after, under timings[name]."""
    load, wall, cpu = os.getloadavg()[0], time.perf_counter(), cpu_seconds()
    result = run()
    timings[name] = {
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(cpu_seconds() - cpu, 1),
        "load_average_1min_start": round(load, 2),
        "load_average_1min_end": round(os.getloadavg()[0], 2),
    }
    return result


def run_green(args, out: Path, timings: dict) -> Path:
    from radmetrics.training.common.run_dir import is_complete
    from radmetrics.training.recipes import load_recipe

    pretrain_dir = Path(args.pretrain_out or out / "pretrain")
    if not is_complete(pretrain_dir / "final"):
        config = str(REPO / "configs/green/pretrain/tiny.yaml")
        pretrain_args = ["--config", config, "--output_dir", str(pretrain_dir), *shlex.split(args.pretrain_args)]
        timed("pretrain", timings, lambda: load_recipe("green/pretrain").main(pretrain_args))
    sft_args = ["--config", str(REPO / "configs/green/sft/tiny.yaml"), "--output_dir", str(out / "sft")]
    sft_args += ["--model_name_or_path", str(pretrain_dir / "final"), *shlex.split(args.sft_args)]
    return timed("sft_with_final_evaluation", timings, lambda: load_recipe("green/sft").main(sft_args))


def run_crimson(args, out: Path, timings: dict) -> Path:
    from radmetrics.training.recipes import load_recipe

    sft_args = ["--config", str(REPO / "configs/crimson/sft/tiny.yaml"), "--output_dir", str(out / "sft")]
    sft_args += shlex.split(args.sft_args)
    return timed("sft_with_final_evaluation", timings, lambda: load_recipe("crimson/sft").main(sft_args))


def main() -> None:
    from importlib.metadata import version

    from radmetrics.training.common.run_dir import RUN_MANIFEST, read_eval_results

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", choices=("green", "crimson"), default="green")
    parser.add_argument("--out", default="checkpoints/bench_green_tiny_time")
    parser.add_argument("--pretrain-out", help="stage-1 run directory (default OUT/pretrain); reused when complete")
    parser.add_argument(
        "--pretrain-args", default="", help="extra green/pretrain arguments, one string (e.g. --num_train_epochs 1)"
    )
    parser.add_argument("--sft-args", default="", help="extra SFT arguments, one string (e.g. --report_to none)")
    parser.add_argument("--results", help="file name under benchmarks/results/ (default: RECIPE_tiny_time.json)")
    parser.add_argument("--note", default="", help="what else ran on the machine (it is shared or not)")
    args = parser.parse_args()
    out, timings = Path(args.out), {}
    sft = (run_green if args.recipe == "green" else run_crimson)(args, out, timings)
    results = read_eval_results(sft)
    manifest = json.loads((sft / RUN_MANIFEST).read_text())
    measured = timings["sft_with_final_evaluation"]
    write_results(
        args.results or f"{args.recipe}_tiny_time.json",
        {
            "question": f"{args.recipe}/sft tiny with its final evaluation in {GOAL_S} s on {CORES} cores?",
            "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
            "machine": machine(),
            "versions": {name: version(name) for name in ("torch", "transformers", "trl", "radmetrics")},
            "note": args.note,
            "pretrain_args": args.pretrain_args,
            "sft_args": args.sft_args,
            "goal_s": GOAL_S,
            "timings": timings,
            "within_goal_wall": measured["wall_s"] <= GOAL_S,
            "within_goal_cpu": measured["cpu_s"] <= CORES * GOAL_S,
            "data": {k: v for k, v in manifest["data_provenance"].items() if k.endswith(("pairs", "length"))},
            "final_evaluation": {k: v for k, v in results.items() if k.startswith("test_")},
        },
    )


if __name__ == "__main__":
    main()
