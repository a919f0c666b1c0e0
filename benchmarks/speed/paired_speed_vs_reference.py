"""Whole-process pairs: radmetrics' side of scoring_speed_vs_reference.py against one other side, run in turn (A B, B
A, A B, ...), with the ratio taken pair by pair, so that a comparison holds when the machine's speed drifts.

    python benchmarks/speed/paired_speed_vs_reference.py --metric chexbert --side f1chexbert [--pairs 100] [--runs 6]
    # for another harness
    python benchmarks/speed/paired_speed_vs_reference.py --metric radcliq --side radeval --print-commands

A side is a reference package (f1chexbert, radgraph, ratescore, bert-score), radeval, or bf16 (radmetrics with
precision=bf16). Each run is one process on the same --pairs IU pairs and full-size look-alikes as
scoring_speed_vs_reference.py: imports, loading the model, a first and a warm call. One warm-up run of each side is not
counted; the counted rounds alternate which side goes first (equally often with an even --runs, the default 6). For
each side: the median (min, max) of the whole process's wall seconds and peak resident memory in MiB (the kernel's
accounting of the finished process, os.wait4) and of the worker's own warm-call seconds; and the ratio side /
radmetrics per pair. Writes benchmarks/results/paired_<metric>_<side>.json (or --results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1] / "tests")]

from scoring_speed_vs_reference import (  # noqa: E402
    ENVIRONMENT,
    PACKAGE,
    lookalikes_ready,
    prepare_work,
    worker_command,
    worker_environment,
    worker_settings,
)


def timed_process(command: list[str], env: dict, log: Path, out: Path) -> dict:
    """Wall seconds and peak RSS of one finished process, and the warm-call seconds its worker wrote to `out`."""
    start = time.perf_counter()
    with log.open("ab") as stderr:
        process = subprocess.Popen(command, env=env, cwd=out.parent, stdout=stderr, stderr=stderr)
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # interrupted: stop the worker before its scratch folder is removed
            process.kill()
            process.wait()
            raise
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:  # the scratch folder holding the log is removed: the error carries the log's end
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(
            f"{shlex.join(command[:4])} ... failed (exit {process.returncode}); the end of its output:\n{tail}"
        )
    return {
        "wall_seconds": wall,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "warm_seconds": json.loads(out.read_text(encoding="utf-8"))["warm_seconds"],
    }


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--metric", required=True, choices=["chexbert", "radgraph", "ratescore", "bertscore", "radcliq"]
    )
    parser.add_argument("--side", required=True, choices=[*PACKAGE.values(), "radeval", "bf16"])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument(
        "--runs",
        type=int,
        default=6,
        help="counted runs of each side (after one warm-up of each); even: each side goes first equally often",
    )
    parser.add_argument("--lookalikes", type=Path, default=HERE.parents[1] / "checkpoints" / "lookalikes_full")
    parser.add_argument("--envs", type=Path, default=HERE.parents[1] / ".venv-ref")
    parser.add_argument(
        "--print-commands",
        action="store_true",
        help="print the two commands and their environment (in a kept scratch folder) instead of running them",
    )
    parser.add_argument("--results", type=Path)
    args = parser.parse_args(argv)
    if args.side not in ("radeval", "bf16", PACKAGE.get(args.metric)):
        parser.error(f"--side {args.side} does not compute {args.metric}")
    return args


def print_commands(sides: dict, root: Path, work: Path, metric: str) -> None:
    """Each side's command line with its environment settings, to run by hand or in another harness."""
    for side, (command, _) in sides.items():
        settings = worker_settings(root, work, side, metric)
        print(
            f"# {side}\n{' '.join(f'{k}={shlex.quote(v)}' for k, v in sorted(settings.items()))} {shlex.join(command)}"
        )


def alternating_runs(sides: dict, counted: int, work: Path) -> dict[str, list[dict]]:
    """`counted` timed processes of each side after one uncounted warm-up round, the first side going first in odd
    rounds: {side: [timed_process, ...]}."""
    runs = {side: [] for side in sides}
    order = list(sides)
    for index in range(counted + 1):  # round 0 warms the file cache and is not counted
        for side in order if index % 2 else order[::-1]:  # counted rounds alternate, radmetrics first in the first
            command, env = sides[side]
            print(f"run {index}/{counted}: {side}", file=sys.stderr, flush=True)
            timed = timed_process(command, env, work / f"{side}.log", work / f"{side}.json")
            if index:
                runs[side].append(timed)
    return runs


def paired_results(args: argparse.Namespace, runs: dict[str, list[dict]]) -> dict:
    """The results file: each side's spreads and the ratio side / radmetrics taken pair by pair."""
    other = args.side
    return {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, no GPU used",
        "command": "python benchmarks/speed/paired_speed_vs_reference.py " + " ".join(sys.argv[1:]),
        "metric": args.metric,
        "pairs": args.pairs,
        "counted_runs": args.runs,
        "order": (
            f"counted rounds alternate, radmetrics first in round 1, {other} first in round 2, ... (round 0, the"
            " warm-up, not counted)"
        ),
        "sides": {
            side: {
                figure: spread([r[figure] for r in found])
                for figure in ("wall_seconds", "peak_rss_mib", "warm_seconds")
            }
            for side, found in runs.items()
        },
        "ratio_side_over_radmetrics": {
            figure: spread([b[figure] / a[figure] for a, b in zip(runs["radmetrics"], runs[other])])
            for figure in ("wall_seconds", "warm_seconds")
        },
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> None:
    from parity.make_fixtures import environment
    from scoring_speed_vs_radeval import benchmark_pairs

    from radmetrics.inference.files.atomic import write_text

    args = parse_args(argv)
    root = lookalikes_ready(args.lookalikes)
    python = None if args.side == "bf16" else environment(args.envs, ENVIRONMENT[args.side])
    work = Path(tempfile.mkdtemp(prefix="paired_speed_"))
    kept = False  # --print-commands keeps the folder its commands name
    try:
        prepare_work(work, root, benchmark_pairs(args.pairs))
        sides = {
            side: (
                worker_command(side, args.metric, root, work, work / f"{side}.json", python=python),
                worker_environment(root, work, side, args.metric),
            )
            for side in ("radmetrics", args.side)
        }
        if args.print_commands:
            print_commands(sides, root, work, args.metric)
            kept = True
            return
        runs = alternating_runs(sides, args.runs, work)
    finally:
        if not kept:
            shutil.rmtree(work)
    results = paired_results(args, runs)
    path = args.results or HERE.parent / "results" / f"paired_{args.metric}_{args.side}.json"
    write_text(path, json.dumps(results, indent=2) + "\n")
    ratio = results["ratio_side_over_radmetrics"]
    print(
        f"{args.metric}, {args.pairs} pairs, {args.runs} pairs of runs: {args.side} / radmetrics whole process"
        f" {ratio['wall_seconds']['median']:.2f}"
        f" ({ratio['wall_seconds']['min']:.2f}-{ratio['wall_seconds']['max']:.2f}), warm call"
        f" {ratio['warm_seconds']['median']:.2f}"
        f" ({ratio['warm_seconds']['min']:.2f}-{ratio['warm_seconds']['max']:.2f})\nwrote {path}"
    )


if __name__ == "__main__":
    main()
