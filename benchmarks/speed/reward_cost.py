"""Cost of radmetrics metrics as RL rewards: seconds per 1,000 rewards, per score key.

    python benchmarks/speed/reward_cost.py                                   # the metrics that need no component
    python benchmarks/speed/reward_cost.py --keys radgraph_partial chexbert_similarity ratescore --components released
    python benchmarks/speed/reward_cost.py --keys rougeL --batch-size 256 --rewards 4000
    python benchmarks/speed/reward_cost.py --keys chexbert_similarity radgraph_partial radgraph_complete ratescore \
        --lookalikes checkpoints/lookalikes_full        # full-size look-alikes (scoring_speed_vs_reference.py builds
        them)

Each key is wrapped in `radmetrics.inference.rewards.MetricReward` (as a GRPO trainer would call it), loaded once
(the load time is reported apart), warmed up on one batch, then timed on `--rewards` IU X-ray candidate/reference
pairs in batches of `--batch-size` (a GRPO step's completions). Rewards on one component share its loaded model
(`Metric.loaded`): `models_loaded` counts the models the whole run loaded. Writes
benchmarks/results/reward_cost_<device>.json with the machine it ran on
(`reward_cost_<device>_lookalikes_full.json` with `--lookalikes`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_KEYS = ["bleu2", "bleu4", "rougeL", "bertscore"]


def main() -> None:
    import torch

    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.inference.loading.discovery import discover_components
    from radmetrics.inference.metrics.base import _SHARED
    from radmetrics.inference.scoring.registry import REGISTRY
    from radmetrics.inference.scoring.rewards import MetricReward

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", nargs="+", default=DEFAULT_KEYS)
    parser.add_argument("--components", nargs="+", default=[], help="as for radmetrics score")
    parser.add_argument("--rewards", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lookalikes", type=Path, help="score the learned metrics with these full-size look-alikes")
    args = parser.parse_args()
    texts = [r.text for r in iu_xray_corpus()]
    references = [texts[i % len(texts)] for i in range(args.rewards)]
    candidates = [texts[(i + 7) % len(texts)] for i in range(args.rewards)]  # another real report as the completion
    components, options = discover_components(args.components), {}
    if args.lookalikes:
        sys.path.insert(0, str(ROOT / "benchmarks" / "speed"))
        from scoring_speed_vs_reference import lookalikes_ready, scorer_setup

        components, options = scorer_setup(lookalikes_ready(args.lookalikes))
    results = {}
    for key in args.keys:
        start = time.perf_counter()
        owner = next(spec.name for spec in REGISTRY.values() if key in spec.keys)
        reward = MetricReward(key, components, options.get(owner))
        reward(
            completions=candidates[: args.batch_size], reference=references[: args.batch_size]
        )  # warm-up (loads models)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(0, args.rewards, args.batch_size):
            reward(completions=candidates[i : i + args.batch_size], reference=references[i : i + args.batch_size])
        elapsed = time.perf_counter() - start
        results[key] = {
            "seconds_per_1000": round(elapsed * 1000 / args.rewards, 3),
            "load_and_warm_up_s": round(loaded, 2),
        }
        print(
            f"{key}: {results[key]['seconds_per_1000']} s per 1,000 rewards (load + warm-up"
            f" {results[key]['load_and_warm_up_s']} s)",
            flush=True,
        )
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"cpu ({os.cpu_count()} cores)"
    out = {
        "command": "python benchmarks/speed/reward_cost.py " + " ".join(sys.argv[1:]),
        "device": device,
        "machine": platform.platform(),
        "torch_threads": torch.get_num_threads(),
        "rewards": args.rewards,
        "batch_size": args.batch_size,
        "components": components,
        "keys": results,
        "models_loaded": len(_SHARED),
    }
    name = ("gpu" if torch.cuda.is_available() else "cpu") + ("_lookalikes_full" if args.lookalikes else "")
    path = ROOT / "benchmarks" / "results" / f"reward_cost_{name}.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
