"""The statistics part of `radmetrics compare` on 10,000 pairs (keys rougeL, bleu2, semantic_green; the default 1,000
bootstrap resamples and 10,000 permutations): this checkout against the commit before the vectorised path (91c85eb),
in one process, alternating, with the intervals and p-values checked identical.

    python benchmarks/speed/compare_stats_time.py [--pairs 10000] [--rounds 3] [--old-commit 91c85eb]
    (writes benchmarks/results/compare_stats_time.json)

Scoring is left out of the timing, and no metric runs: each system's per-sample scores are synthesised once,
deterministically (seed 0), as the per_sample_{a,b}.jsonl files compare writes (one row per pair: each key's value
and the id), into --data (kept, so a rerun reads them), and loaded into the ScoreResult compare's statistics read
(one MetricOutput per metric; the three keys are mean-aggregated, as rougeL, bleu2 and semantic_green are). rougeL
and bleu2 are continuous in [0, 1]; semantic_green is matched / (matched + errors) with small counts, so it has many
ties, as GREEN scores do. Timed: `compare_key` for the three keys, this checkout's (inference/cli/compare.py) and the
old commit's, whose source is read with `git show` and run against its own stats module (also from `git show`). The
old side calls `ScoreResult.aggregate`, so the script first checks that this checkout's `aggregate` methods are the
old commit's, word for word.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import REPO, RESULTS, machine  # noqa: E402

from radmetrics.inference.cli import compare  # noqa: E402
from radmetrics.inference.files.atomic import built_once, write_text  # noqa: E402
from radmetrics.inference.files.output_paths import check_output_file, ensure_output_dir  # noqa: E402
from radmetrics.inference.metrics.base import MetricOutput  # noqa: E402
from radmetrics.inference.scoring.scorer import ScoreResult  # noqa: E402

KEYS = ("rougeL", "bleu2", "semantic_green")
DATA_VERSION = 2  # bumped when synthetic_rows changes, so that a kept --data folder is not read as the new data
OLD_COMMIT = "91c85eb"  # main's HEAD when the vectorised path was started (issue 65)


def synthetic_rows(n: int, system: str, seed: int = 0) -> list[dict]:
    """n per-sample rows of one system, as compare's per_sample_{a,b}.jsonl holds them: B's rougeL and bleu2 a little
    worse than A's; semantic_green drawn alike for both, so its p-value lies inside (0, 1) and the check means more."""
    rng = np.random.default_rng([seed, ord(system)])
    shift = 0.0 if system == "a" else 0.01
    rouge = np.clip(rng.beta(4, 3, n) - shift, 0, 1)
    bleu2 = np.clip(rouge * rng.uniform(0.6, 1.0, n), 0, 1)
    matched = rng.integers(0, 6, n)
    errors = rng.integers(0, 5, n)
    green = matched / np.maximum(matched + errors, 1)
    return [
        {"rougeL": float(r), "bleu2": float(b), "semantic_green": float(g), "id": str(i)}
        for i, (r, b, g) in enumerate(zip(rouge, bleu2, green))
    ]


def build_score_files(folder: Path, n: int) -> Path:
    """--data/<n>_pairs_v<DATA_VERSION>/per_sample_{a,b}.jsonl, built once (published whole), read back later."""

    def build(staging: Path) -> None:
        for system in ("a", "b"):
            text = "".join(json.dumps(row) + "\n" for row in synthetic_rows(n, system))
            write_text(staging / f"per_sample_{system}.jsonl", text)

    built = lambda path: all((path / f"per_sample_{s}.jsonl").is_file() for s in "ab")  # noqa: E731
    return built_once(folder / f"{n}_pairs_v{DATA_VERSION}", build, built)


def load_result(folder: Path) -> tuple[ScoreResult, int]:
    """The ScoreResult compare holds after scoring A's pairs then B's: per-sample rows and one output per metric."""
    rows = []
    for system in ("a", "b"):
        with (folder / f"per_sample_{system}.jsonl").open(encoding="utf-8") as fh:
            rows.extend({k: v for k, v in json.loads(line).items() if k != "id"} for line in fh)
    outputs = {key: MetricOutput(per_sample={key: [row[key] for row in rows]}) for key in KEYS}
    result = ScoreResult(
        summary={key: {} for key in KEYS},
        per_sample=rows,
        higher_is_better={key: True for key in KEYS},
        outputs=outputs,
    )
    return result, len(rows) // 2


def git_show(commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def old_compare_key(commit: str, scratch: Path):
    """The old commit's `compare_key`, verbatim, bound to the old commit's stats module."""
    for method, path in (
        (ScoreResult.aggregate, "inference/scoring/scorer.py"),
        (MetricOutput.aggregate, "inference/metrics/base.py"),
    ):
        if inspect.getsource(method) not in git_show(commit, path):
            raise SystemExit(f"{method.__qualname__} differs from {commit}'s: the old side would not be {commit}")
    stats_file = scratch / f"stats_{commit}.py"
    stats_file.write_text(git_show(commit, "inference/scoring/stats.py"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"stats_{commit}", stats_file)
    old_stats = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old_stats)
    source = git_show(commit, "inference/cli/compare.py")
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "compare_key")
    namespace = {"argparse": argparse, "paired_comparison": old_stats.paired_comparison}
    exec(compile(ast.get_source_segment(source, node), f"{commit}:inference/cli/compare.py", "exec"), namespace)
    return namespace["compare_key"]


def default_arguments() -> argparse.Namespace:
    """compare's own defaults (--bootstrap, --permutations, --seed), from its parser."""
    parser = argparse.ArgumentParser()
    compare.add_arguments(parser)
    return parser.parse_args(["--refs", "r", "--system-a", "a", "--system-b", "b", "--out", "o"])


def timed(compare_key, result, n: int, args) -> tuple[float, float, str]:
    """Wall and CPU seconds of this process for the three keys' statistics, and their JSON (compared byte for byte).
    On a shared machine the CPU seconds are the steadier figure."""
    wall, cpu = time.perf_counter(), time.process_time()
    comparison = {key: compare_key(result, key, n, args) for key in KEYS}
    return time.perf_counter() - wall, time.process_time() - cpu, json.dumps(comparison, sort_keys=True)


def head_commit() -> str:
    run = lambda *cmd: subprocess.run(["git", "-C", str(REPO), *cmd], capture_output=True, text=True).stdout  # noqa: E731
    return run("rev-parse", "--short", "HEAD").strip() + (
        " (uncommitted changes)" if run("status", "--porcelain") else ""
    )


def measure(result, n: int, args, old, rounds: int) -> dict:
    """Alternating rounds (old first in even rounds, new first in odd ones); every round's output checked identical."""
    times: dict[str, dict[str, list[float]]] = {"wall": {"old": [], "new": []}, "cpu": {"old": [], "new": []}}
    sides = {"old": old, "new": compare.compare_key}
    reference = None
    for r in range(rounds):
        for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
            wall, cpu, output = timed(sides[side], result, n, args)
            times["wall"][side].append(round(wall, 3))
            times["cpu"][side].append(round(cpu, 3))
            reference = reference or output
            if output != reference:
                raise SystemExit(f"round {r + 1}: the {side} side's intervals or p-values differ")
            print(f"round {r + 1}: {side} {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    ratios = {clock: [round(new / old, 4) for new, old in zip(t["new"], t["old"])] for clock, t in times.items()}
    return {"seconds": times, "new_over_old_by_round": ratios, "identical": True, "comparison": json.loads(reference)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of old and new")
    parser.add_argument("--old-commit", default=OLD_COMMIT)
    parser.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "radmetrics_compare_stats"))
    parser.add_argument("--results", default=str(RESULTS / "compare_stats_time.json"))
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.rounds < 1:
        raise SystemExit("--pairs and --rounds must be at least 1")
    out = check_output_file(args.results, what="--results")
    data = ensure_output_dir(args.data, what="--data")
    new = head_commit()  # the code this process imported, before anything else is committed
    result, n = load_result(build_score_files(data, args.pairs))
    defaults = default_arguments()
    with tempfile.TemporaryDirectory() as scratch:
        old = old_compare_key(args.old_commit, Path(scratch))
        measured = measure(result, n, defaults, old, args.rounds)
    medians = {clock: {side: statistics.median(t[side]) for side in t} for clock, t in measured["seconds"].items()}
    ratio = {clock: statistics.median(r) for clock, r in measured["new_over_old_by_round"].items()}
    report = {
        "command": "python benchmarks/speed/compare_stats_time.py " + " ".join(argv or sys.argv[1:]),
        "machine": machine(),
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "new": new,
        "old": args.old_commit,
        "pairs": n,
        "keys": list(KEYS),
        "bootstrap": defaults.bootstrap,
        "permutations": defaults.permutations,
        "seed": defaults.seed,
        "scores": "synthesised (seed 0) per_sample_{a,b}.jsonl, no metric run: see the script's docstring",
        "median_seconds": medians,
        "median_new_over_old": ratio,
        "gate_at_most_half": ratio["wall"] <= 0.5 and ratio["cpu"] <= 0.5,
        **measured,
    }
    write_text(out, json.dumps(report, indent=2) + "\n")
    wall, cpu = medians["wall"], medians["cpu"]
    print(
        f"median of {args.rounds}: old {wall['old']:.2f} s wall ({cpu['old']:.2f} s CPU), new {wall['new']:.2f} s wall"
        f" ({cpu['new']:.2f} s CPU); new / old {ratio['wall']:.4f} wall, {ratio['cpu']:.4f} CPU; identical"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
