"""`radmetrics rehearse CONFIG... [--deepspeed JSON] [--workdir DIR]`: a GPU config rehearsed end to end on CPU."""

from __future__ import annotations

import argparse

HELP = "rehearse GPU configs on CPU through the SLURM launcher before submitting them"
DESCRIPTION = """Run each config as it is, with the model swapped for a tiny random model of the same architecture
family and the steps cut, through slurm/launch.sbatch (stand-in srun/scontrol) as 2 nodes x 1 CPU process over gloo:
train, SIGUSR1 once the ranks start (save at the next step end, requeue), resume from that checkpoint, final \
evaluation, export,
reload with transformers' Auto classes. Without CONFIG, every GPU config in configs/ is rehearsed.

Needs the repository checkout (configs/ and slurm/), run from anywhere. About 1-4 minutes per config on 2 cores."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("configs", nargs="*", help="recipe YAMLs (default: every base/7B config in configs/)")
    parser.add_argument(
        "--deepspeed",
        help=(
            "rehearse under this DeepSpeed JSON instead of the config's own "
            "(e.g. configs/deepspeed/zero3_offload.json)"
        ),
    )
    parser.add_argument(
        "--workdir", default="rehearsal", help="look-alike models, data, runs and logs (default: ./rehearsal)"
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds each job attempt may take")


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require_extra

    from ..rehearsal import RehearsalError, gpu_configs, rehearse

    require_extra("train", for_what="radmetrics rehearse")

    configs = args.configs or [str(p) for p in gpu_configs()]
    failed = 0
    print("| config | DeepSpeed | saved on USR1 | resumed from | final step | reloaded as | seconds |")
    print("|---|---|---|---|---|---|---|")
    for config in configs:
        try:
            r = rehearse(config, args.workdir, args.deepspeed, args.timeout)
        except RehearsalError as exc:
            failed += 1
            print(f"| {config} | FAILED: {exc} |||||", flush=True)
            continue
        print(
            f"| {r.config} | {r.deepspeed or 'DDP'} | {r.saved_on_signal} | {r.resumed_from} | {r.final_step} | "
            f"{r.reloaded_as} | {r.seconds} |",
            flush=True,
        )
    return 1 if failed else 0
