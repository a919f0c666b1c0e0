"""Time every radmetrics metric on 1,000 report pairs (CPU), and RadEval on the same pairs for the metrics
both can run offline (BLEU, ROUGE).

    python benchmarks/speed/scoring_speed_vs_radeval.py [--components DIR] [--peer-python PATH] [--pairs 1000]

Pairs: the bundled IU X-ray reports, each scored against another report of the corpus (fixed shuffle), the
realistic case of a wrong candidate. `--components DIR` (exports, e.g. the demo's `checkpoints/demo/exports`)
adds the component metrics; their time depends on the exported model's size, recorded next to it.
`--peer-python` (or $RADEVAL_PYTHON) is the python of a separate environment with PyPI `radeval`
(it needs numpy<2 and its torchvision removed; see benchmarks/README.md). Each metric is timed once,
end to end (component loading and computation; not the score table's bootstrap) twice in one process:
the first call also pays for imports, the second is the steady state the ratio compares.
Writes benchmarks/results/scoring_speed_vs_radeval.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import tempfile
import time
from pathlib import Path

# Which RadEval metric covers which of ours (RadEval's "bleu" is corpus BLEU-4 only; its "rouge" also
# computes ROUGE-1 and ROUGE-2, so its time covers more work than our rougeL).
PEER_EQUIVALENT = {"bleu4": ("bleu", "bleu"), "rougeL": ("rouge", "rougeL")}

PEER_SCRIPT = """
import json, sys, time
started = time.perf_counter()
from radeval import RadEval
import_seconds = time.perf_counter() - started
pairs = json.load(open(sys.argv[1]))
refs, hyps = [p["ref"] for p in pairs], [p["hyp"] for p in pairs]
out = {"import_seconds": import_seconds, "metrics": {}}
for name in sys.argv[2:]:
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        scores = RadEval(metrics=[name], show_progress=False)(refs, hyps)
        seconds.append(time.perf_counter() - start)
    out["metrics"][name] = {"first_call_seconds": seconds[0], "seconds": seconds[1], "scores": scores}
print("RESULT " + json.dumps(out))
"""


def benchmark_pairs(n: int) -> list[dict]:
    """`n` pairs of bundled IU X-ray reports: each report against a shuffled partner (seed 0); past the corpus's size,
    further rounds with other shuffles (seed 1, 2, ...), so that every report appears again as a reference."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    texts = [r.text for r in iu_xray_corpus() if r.text]
    pairs: list[dict] = []
    for seed in range(-(-n // len(texts))):
        partners = texts[:]
        random.Random(seed).shuffle(partners)
        pairs.extend({"ref": r, "hyp": h} for r, h in zip(texts, partners))
    return pairs[:n]


def time_ours(pairs: list[dict], components: dict) -> dict:
    from radmetrics.inference.scoring.registry import REGISTRY, available_metrics

    refs, hyps = [p["ref"] for p in pairs], [p["hyp"] for p in pairs]
    results, upstream = {}, {}
    for name in available_metrics(components):
        spec = REGISTRY[name]
        seconds = []
        for _ in range(2):
            start = time.perf_counter()
            output = spec(components=components, upstream=upstream)(refs, hyps)
            seconds.append(time.perf_counter() - start)
        upstream[name] = output
        results[name] = {
            "first_call_seconds": round(seconds[0], 3),
            "seconds": round(seconds[1], 3),
            "keys": {k: round(output.aggregate(k), 4) for k in spec.keys},
        }
        if spec.depends_on:
            results[name]["note"] = f"combines per-sample scores of {', '.join(spec.depends_on)} computed before it"
    return results


def time_peer(pairs: list[dict], python: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "pairs.json"
        data.write_text(json.dumps(pairs))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        done = subprocess.run(
            [python, "-c", PEER_SCRIPT, str(data), *sorted({m for m, _ in PEER_EQUIVALENT.values()})],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"RadEval run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT ") :])


def component_sizes(components: dict) -> dict:
    sizes = {}
    for kind, path in components.items():
        weights = sum(p.stat().st_size for p in Path(path).glob("*.safetensors"))
        sizes[kind] = {"path": str(path), "weights_mb": round(weights / 2**20, 2)}
    return sizes


def main() -> None:
    from radmetrics.inference.loading.discovery import discover_components

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--components", help="directory of exports (or one export) for the component metrics")
    parser.add_argument(
        "--peer-python", default=os.environ.get("RADEVAL_PYTHON"), help="python of the RadEval environment"
    )
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parents[1] / "results" / "scoring_speed_vs_radeval.json")
    )
    args = parser.parse_args()

    pairs = benchmark_pairs(args.pairs)
    components = discover_components([args.components]) if args.components else {}
    result = {
        "machine": f"{platform.machine()} ({platform.system()}), {os.cpu_count()} CPU cores, no GPU",
        "pairs": len(pairs),
        "pairs_source": "bundled IU X-ray reports, each against another report (seed 0)",
        "components": component_sizes(components),
        "radmetrics": time_ours(pairs, components),
    }
    if args.peer_python:
        peer = time_peer(pairs, args.peer_python)
        result["radeval"] = peer
        result["comparison"] = {}
        for ours, (peer_metric, peer_key) in PEER_EQUIVALENT.items():
            owner = next(name for name, r in result["radmetrics"].items() if ours in r["keys"])
            ours_s, peer_s = result["radmetrics"][owner]["seconds"], peer["metrics"][peer_metric]["seconds"]
            result["comparison"][ours] = {
                "radmetrics_seconds": ours_s,
                "radeval_metric": peer_metric,
                "radeval_seconds": round(peer_s, 3),
                "radeval_first_call_seconds": round(peer["metrics"][peer_metric]["first_call_seconds"], 3),
                "radeval_over_radmetrics": round(peer_s / ours_s, 2),
                "radmetrics_value": result["radmetrics"][owner]["keys"][ours],
                "radeval_value": peer["metrics"][peer_metric]["scores"][peer_key],
            }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"{len(pairs)} pairs on {result['machine']}\n\n| metric (score keys) | radmetrics s (first call) | RadEval s"
        " (first call) | RadEval / radmetrics |\n|---|---|---|---|"
    )
    for name, r in result["radmetrics"].items():
        c = next((result["comparison"][k] for k in r["keys"] if k in result.get("comparison", {})), None)
        peer_cols = (
            f"{c['radeval_seconds']:.2f} ({c['radeval_first_call_seconds']:.2f}; RadEval `{c['radeval_metric']}`) | "
            f"{c['radeval_over_radmetrics']:.2f}"
            if c
            else "n/a | n/a"
        )
        print(f"| {name} ({len(r['keys'])} keys) | {r['seconds']:.2f} ({r['first_call_seconds']:.2f}) | {peer_cols} |")


if __name__ == "__main__":
    main()
