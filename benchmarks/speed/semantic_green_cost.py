"""What findings-first costs: `radmetrics score --metrics semantic_green` on N pairs of bundled IU X-ray reports (the
workload of scoring_speed_vs_radeval.benchmark_pairs), as whole processes, for this tree and optionally for another
checkout of radmetrics (e.g. 5ad656f, before findings-first) run with the same environment.

    python benchmarks/speed/semantic_green_cost.py --pairs 10000 --out /tmp/cost [--base-tree /tmp/base5ad] [--runs 3]
    python benchmarks/speed/semantic_green_cost.py --pairs 10000 --out /tmp/cost --judge EXPORT   # rules vs judge
    python benchmarks/speed/semantic_green_cost.py --pairs 10000 --out /tmp/cost --judge EXPORT --judge-only  # alone

Each run is one process: wall seconds and its own peak resident memory (`run_alone`: os.wait4's rusage of that child
alone, not getrusage(RUSAGE_CHILDREN)'s maximum over every child run so far, which let a later side inherit an earlier
side's peak); its output goes to OUT/<side>_<run>.log. With --base-tree, the
two trees alternate run by run (A B A B ...), so a drifting machine slows both alike, and the ratio is taken pair by
pair. The other tree is imported through a folder that maps `radmetrics.{inference,training,data_builders}` to its
folders, put first on PYTHONPATH; its console script's subcommands resolve there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # scoring_speed_vs_radeval beside it, common one folder up


def shim(tree: Path, work: Path) -> Path:
    """A folder whose `radmetrics` package is the other tree's three folders."""
    folder = work / "shim" / "radmetrics"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("inference", "training", "data_builders"):
        link = folder / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(tree.resolve() / name)
    return folder.parent


def run_alone(command: list[str], env: dict, log: Path) -> tuple[int, float, float]:
    """Run one command as a child, its output to `log`: (exit status, wall seconds, the child's own peak resident set
    in MiB). os.wait4 returns the rusage of that child alone (its ru_maxrss: the larger of its own peak and that of
    any process it waited for), so each run's figure is its own, whatever ran before it."""
    with open(log, "w", encoding="utf-8") as fh:
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    return child.returncode, seconds, usage.ru_maxrss / 1024


def one_run(pairs_file: Path, out: Path, options: list[str], pythonpath: Path | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if pythonpath is not None:
        env["PYTHONPATH"] = f"{pythonpath}{os.pathsep}{env.get('PYTHONPATH', '')}"
    command = [
        sys.executable,
        "-m",
        "radmetrics.inference.cli",
        "score",
        *f"--refs {pairs_file} --ref-field ref --hyps {pairs_file} --hyp-field hyp".split(),
        *"--metrics semantic_green --bootstrap 0".split(),
        *options,
        "--out",
        str(out),
    ]
    log = out.parent / f"{out.name}.log"
    code, seconds, peak_mib = run_alone(command, env, log)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {code}); its output: {log}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "seconds": seconds,
        "peak_rss_mib": peak_mib,
        "semantic_green": summary["semantic_green"]["value"],
        "signature": summary["semantic_green"].get("signature"),
    }


def main() -> None:
    from common import machine, write_results
    from scoring_speed_vs_radeval import benchmark_pairs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True, help="work folder (pairs file, score outputs)")
    parser.add_argument("--base-tree", type=Path, help="another radmetrics checkout to time against")
    parser.add_argument("--option", action="append", default=[], help="--option for this tree's runs")
    parser.add_argument(
        "--judge", help="a finding_judge export: adds this tree with judge=model beside its rules, run by run"
    )
    parser.add_argument("--results", help="name of the results file in benchmarks/results (default: printed only)")
    parser.add_argument(
        "--judge-only", action="store_true", help="with --judge: run only the judge=model side (its memory alone)"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pairs_file = args.out / f"pairs_{args.pairs}.jsonl"
    pairs_file.write_text("".join(json.dumps(p) + "\n" for p in benchmark_pairs(args.pairs)), encoding="utf-8")
    sides = {"this tree": (None, [o for item in args.option for o in ("--option", item)])}
    if args.judge:
        judge = ["--option", "semantic_green.judge=model", "--components", args.judge]
        sides["this tree, judge=model"] = (None, sides["this tree"][1] + judge)
    if args.judge and args.judge_only:
        del sides["this tree"]
    if args.base_tree:
        sides["base tree"] = (shim(args.base_tree, args.out), [])
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for n in range(args.runs):
        for name, (pythonpath, options) in sides.items():
            runs[name].append(one_run(pairs_file, args.out / f"{name.replace(' ', '_')}_{n}", options, pythonpath))
            print(name, n, json.dumps(runs[name][-1]), flush=True)
    report = {
        "machine": machine(),
        "command": " ".join(sys.argv),
        "pairs": args.pairs,
        "sides": {
            name: {
                "median_seconds": statistics.median(r["seconds"] for r in rows),
                "median_peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rows),
                "runs": rows,
            }
            for name, rows in runs.items()
        },
    }
    if args.base_tree:
        ratios = [a["seconds"] / b["seconds"] for a, b in zip(runs["this tree"], runs["base tree"])]
        report["ratio_this_over_base"] = {"median": statistics.median(ratios), "pairwise": ratios}
    if args.judge and not args.judge_only:
        ratios = [a["seconds"] / b["seconds"] for a, b in zip(runs["this tree, judge=model"], runs["this tree"])]
        report["ratio_judge_over_rules"] = {"median": statistics.median(ratios), "pairwise": ratios}
    print(json.dumps({k: v for k, v in report.items() if k != "sides"}, indent=2))
    if args.results:
        write_results(args.results, report)


if __name__ == "__main__":
    main()
