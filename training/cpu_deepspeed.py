"""DeepSpeed on CPU processes (DS_ACCELERATOR=cpu: CI, `radmetrics rehearse`) with accelerate's real process group.

With a `deepspeed` config and no CUDA device, transformers builds accelerate's state without a backend, so every
process believes it is the only one: each is "rank 0", saves every checkpoint (a non-zero rank overwrites rank 0's
gathered ZeRO-3 weights with its own empty shards) and reads all the data. DeepSpeed itself still runs over a gloo
process group. `use_process_group_on_cpu` builds accelerate's state on that group before the Trainer asks for it,
which is what the state would be on GPUs. It changes nothing where CUDA is available or on a single process.
"""

from __future__ import annotations

import os


def use_process_group_on_cpu(training_args) -> None:
    import torch

    if (
        not getattr(training_args, "deepspeed", None)
        or torch.cuda.is_available()
        or int(os.environ.get("WORLD_SIZE", "1")) < 2
    ):
        return
    from datetime import timedelta

    from accelerate.state import AcceleratorState, PartialState

    AcceleratorState._reset_state(reset_partial_state=True)  # TrainingArguments may have built one already
    os.environ["ACCELERATE_USE_DEEPSPEED"] = "true"  # as TrainingArguments sets it while building the state
    try:
        PartialState(backend="gloo", timeout=timedelta(seconds=training_args.ddp_timeout))
    finally:
        del os.environ["ACCELERATE_USE_DEEPSPEED"]
    training_args.__dict__.pop("_setup_devices", None)  # a cached_property: let it read the state built here
    training_args.accelerator_config.use_configured_state = True
