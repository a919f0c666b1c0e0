"""`radmetrics rehearse CONFIG... [--deepspeed JSON] [--workdir DIR]`: a GPU config rehearsed end to end on CPU."""

from __future__ import annotations

import argparse
import sys

from radmetrics.inference.files.output_paths import OutputFolder

HELP = "rehearse GPU configs on CPU through the SLURM launcher before submitting them, on your data"
DESCRIPTION = """Run each config as it is, with the model swapped for a tiny random model of the same architecture
family and the steps cut, through slurm/launch.sbatch (stand-in srun/scontrol) as 2 nodes x 1 CPU process over gloo:
train, SIGUSR1 once the ranks start (save at the next step end, requeue), resume from that checkpoint, final \
evaluation, export,
reload with transformers' Auto classes. Without CONFIG, every GPU config in configs/ is rehearsed.

With your options after `--` (`radmetrics rehearse [--workdir DIR] CONFIG -- --pairs_dir my_annotations --prompt
findings`), the rehearsal reads and checks your data folder as the real run will (its records, prompt and units; one
line naming the fix when they do not fit), then runs the look-alike to the end on a few of its records with every
option you gave. Without a data folder it builds data from the bundled corpus.

Needs the repository checkout (configs/ and slurm/), run from anywhere. About 1-4 minutes per config on 2 cores."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "configs",
        nargs="*",
        help=(
            "recipe YAMLs (default: every base/7B config in configs/), then `--` and the options your real run will "
            "get (its data folder, prompt...); give rehearse's own options before the configs"
        ),
    )
    parser.add_argument(
        "--deepspeed",
        help=(
            "rehearse under this DeepSpeed JSON instead of the config's own "
            "(e.g. configs/deepspeed/zero3_offload.json)"
        ),
    )
    parser.add_argument(
        "--workdir",
        default=OutputFolder("rehearsal"),
        type=OutputFolder,
        help="look-alike models, data, runs and logs (default: ./rehearsal)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds each job attempt may take")


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require_extra

    from ..rehearsal import RehearsalError, gpu_configs, rehearse

    require_extra("train", for_what="radmetrics rehearse")

    # argparse hands everything after `--` to `configs`: the configs are the items before the first option
    first_option = next((i for i, c in enumerate(args.configs) if c.startswith("-")), len(args.configs))
    given, overrides = args.configs[:first_option], args.configs[first_option:]
    if overrides and not given:
        print(
            "radmetrics rehearse: error: options after -- are for a config's run: name the config first",
            file=sys.stderr,
        )
        return 2
    configs = given or [str(p) for p in gpu_configs()]
    failed = 0
    print("| config | DeepSpeed | saved on USR1 | resumed from | final step | reloaded as | seconds |")
    print("|---|---|---|---|---|---|---|")
    for config in configs:
        try:
            r = rehearse(config, args.workdir, args.deepspeed, args.timeout, overrides)
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
