"""Thread settings and sharding over processes on the CPU: is one process on every core the fastest way to score?

    python benchmarks/speed/process_sharding.py --metric radgraph [--pairs 400] [--results FILE]

On the full-size look-alikes of benchmarks/speed/scoring_speed_vs_reference.py, radmetrics' side of that benchmark (its
`--worker`, a fresh process that builds the Scorer and times a first and a warm call) runs the pairs three ways:
1. one process with torch's default threads (one per core);
2. one process with one thread (OMP_NUM_THREADS=1): how well the work uses a second core;
3. one process per core, started together, each with one thread and a contiguous share of the pairs. Each shard runs
   its own distinct reports, so a report that two shards hold is run twice.
For each it records the wall time from the first process's start to the last one's end (loading included), each
process's first and warm calls, and its peak memory; for 3, how the shards' values, put back in order, differ from 1's.
CheXbert (and RadCliQ, which holds it) is left out: its corpus F1 cannot be put together from the shards' values.
Writes benchmarks/results/process_sharding_<metric>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from scoring_speed_vs_radeval import benchmark_pairs  # noqa: E402
from scoring_speed_vs_reference import (  # noqa: E402
    REPO,
    lookalikes_ready,
    precision_changes,
    prepare_work,
    worker_command,
    worker_environment,
)

METRICS = ("radgraph", "ratescore", "bertscore")


def run_together(commands: list[tuple[list[str], dict, Path]]) -> tuple[float, list[dict]]:
    """Start every (command, environment, out) at once; (seconds until the last ends, each one's result)."""
    start = time.perf_counter()
    running = []
    for command, env, out in commands:  # stderr to a file: a pipe read only after an earlier process ends could fill
        with out.with_suffix(".log").open("w", encoding="utf-8") as log:
            running.append(
                (subprocess.Popen(command, env=env, cwd=out.parent, stdout=subprocess.DEVNULL, stderr=log), out)
            )
    results = []
    for process, out in running:
        if process.wait() != 0:
            stderr = out.with_suffix(".log").read_text(encoding="utf-8")
            raise RuntimeError(f"a worker failed (exit {process.returncode}):\n{stderr[-4000:]}")
        results.append(json.loads(out.read_text(encoding="utf-8")))
    return time.perf_counter() - start, results


def joined_values(shards: list[dict]) -> dict:
    """The shards' per-pair values in pair order (RadGraph's rewards are one list per level)."""
    values = {}
    for key in shards[0]:
        if key == "rewards":
            values[key] = [[v for shard in shards for v in shard[key][level]] for level in range(len(shards[0][key]))]
        else:
            values[key] = [v for shard in shards for v in shard[key]]
    return values


def summary(seconds: float, results: list[dict]) -> dict:
    return {
        "wall_seconds": seconds,
        "processes": len(results),
        "torch_threads": [r["torch_threads"] for r in results],
        "first_call_seconds": [r["first_call_seconds"] for r in results],
        "warm_seconds": [r["warm_seconds"] for r in results],
        "peak_rss_mib": [r["peak_rss_mib"] for r in results],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metric", choices=METRICS, required=True)
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument(
        "--shards", type=int, default=os.cpu_count(), help="processes for the sharded run (default: one per core)"
    )
    parser.add_argument("--lookalikes", type=Path, default=REPO / "checkpoints" / "lookalikes_full")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    root = lookalikes_ready(args.lookalikes)
    pairs = benchmark_pairs(args.pairs)
    size = -(-len(pairs) // args.shards)
    with tempfile.TemporaryDirectory() as work:
        work = prepare_work(Path(work), root, pairs)
        for n in range(args.shards):
            (work / f"shard{n}.json").write_text(json.dumps(pairs[n * size : (n + 1) * size]), encoding="utf-8")
        environment = worker_environment(root, work, "radmetrics", args.metric)
        single = {**environment, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

        def command(name: str, pairs_name: str = "pairs.json") -> list[str]:
            return worker_command("radmetrics", args.metric, root, work, work / name, pairs_name=pairs_name)

        runs = {}
        seconds, (whole,) = run_together([(command("default.json"), environment, work / "default.json")])
        runs["one_process_default_threads"] = summary(seconds, [whole])
        print(json.dumps(runs, indent=1), file=sys.stderr, flush=True)
        seconds, (one,) = run_together([(command("one_thread.json"), single, work / "one_thread.json")])
        runs["one_process_one_thread"] = summary(seconds, [one])
        print(json.dumps(runs, indent=1), file=sys.stderr, flush=True)
        seconds, shards = run_together(
            [(command(f"out{n}.json", f"shard{n}.json"), single, work / f"out{n}.json") for n in range(args.shards)]
        )
        runs["one_process_per_core"] = summary(seconds, shards)
        runs["one_process_per_core"]["values_against_one_process"] = precision_changes(
            args.metric, whole["values"], joined_values([s["values"] for s in shards])
        )
    base = runs["one_process_default_threads"]["wall_seconds"]
    results = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, no GPU used",
        "command": "python benchmarks/speed/process_sharding.py " + " ".join(sys.argv[1:]),
        "metric": args.metric,
        "pairs": len(pairs),
        "shards": args.shards,
        "runs": runs,
        "wall_speedup_over_default": {name: base / run["wall_seconds"] for name, run in runs.items()},
    }
    path = args.results or HERE.parent / "results" / f"process_sharding_{args.metric}.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
