"""Peak memory of `radmetrics score --metrics rougeL` as the number of pairs grows: 10,000 and 100,000 pairs of
IU X-ray reports (the bundled corpus, drawn with replacement, seeded), as .txt files paired by position, and as JSONL
files with ids, the candidates in another order. Each run is its own process; its peak resident set size is read
from the kernel (`getrusage(RUSAGE_CHILDREN).ru_maxrss` in a wrapper process that runs only it). Streaming scoring
(issue 62) aims for the 100,000-pair peak within 10% of the 10,000-pair one.

    python benchmarks/speed/score_memory.py [--kinds txt jsonl]    (writes benchmarks/results/score_memory.json)
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import machine, write_results  # noqa: E402

SIZES = (10_000, 100_000)
GOAL = 0.10  # the 100,000-pair peak within 10% of the 10,000-pair one
PEAK = "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); " + (
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def corpus() -> list[str]:
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    return [" ".join(report.text.split()) for report in iu_xray_corpus()]


def write_inputs(folder: Path, texts: list[str], n: int) -> dict[str, list[str]]:
    """refs/hyps as .txt (by position) and as .jsonl with ids (the candidates shuffled): each one's score arguments."""
    rng = random.Random(n)
    refs, hyps = [rng.choice(texts) for _ in range(n)], [rng.choice(texts) for _ in range(n)]
    (folder / f"refs-{n}.txt").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    (folder / f"hyps-{n}.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    order = rng.sample(range(n), n)
    (folder / f"refs-{n}.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "report": r}) + "\n" for i, r in enumerate(refs)), encoding="utf-8"
    )
    (folder / f"hyps-{n}.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "report": hyps[i]}) + "\n" for i in order), encoding="utf-8"
    )
    return {
        "txt": ["--refs", str(folder / f"refs-{n}.txt"), "--hyps", str(folder / f"hyps-{n}.txt")],
        "jsonl": ["--refs", str(folder / f"refs-{n}.jsonl"), "--hyps", str(folder / f"hyps-{n}.jsonl")],
    }


def peak_rss(arguments: list[str], out: Path) -> tuple[int, float]:
    """(peak RSS in KiB, seconds) of one `radmetrics score` process."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "radmetrics.inference.cli", "score", *arguments, "--metrics", "rougeL"]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *command, "--out", str(out)], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"radmetrics score failed: {done.stderr[-2000:]}")
    return int(done.stdout.strip().splitlines()[-1]), round(time.perf_counter() - start, 1)


def versions() -> dict:
    from importlib.metadata import version

    from radmetrics.inference.scoring.signature import version as radmetrics_version

    found = {"python": sys.version.split()[0], "radmetrics": radmetrics_version()}
    return {**found, "rouge_score": version("rouge_score")}


def main(kinds: list[str]) -> dict:
    results = {
        "machine": machine(),
        "versions": versions(),
        "command": "python benchmarks/speed/score_memory.py --kinds " + " ".join(kinds),
        "measure": "peak RSS (ru_maxrss) of the `radmetrics score --metrics rougeL` process, MiB",
        "goal": f"peak at {SIZES[-1]:,} pairs within {GOAL:.0%} of the peak at {SIZES[0]:,}",
        "runs": {},
    }
    texts = corpus()
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            for kind, arguments in write_inputs(Path(tmp), texts, n).items():
                if kind not in kinds:
                    continue
                kib, seconds = peak_rss(arguments, Path(tmp) / "out")
                results["runs"][f"{kind} {n}"] = {"pairs": n, "peak_rss_mib": round(kib / 1024, 1), "seconds": seconds}
                print(f"{kind:5} {n:>7,} pairs: peak RSS {kib / 1024:.1f} MiB, {seconds} s", flush=True)
    for kind in kinds:
        small, large = (results["runs"][f"{kind} {n}"]["peak_rss_mib"] for n in SIZES)
        growth = large / small - 1
        results[f"{kind}_growth"] = round(growth, 3)
        results[f"{kind}_within_goal"] = growth <= GOAL
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", choices=("txt", "jsonl"), default=["txt", "jsonl"])
    report = main(parser.parse_args().kinds)
    print(f"wrote {write_results('score_memory.json', report)}")
