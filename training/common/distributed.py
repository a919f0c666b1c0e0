"""Rank helpers that work before, during and after the Trainer's process group: which process is the main one, build
data once while the other ranks wait, share out and gather held-out work, and leave the group together."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .run_dir import is_complete, mark_complete


def is_main_process() -> bool:
    """Global rank 0, read from the launcher's environment (torchrun/accelerate set RANK), so it is known before
    the Trainer and its process group exist."""
    return int(os.environ.get("RANK", "0")) == 0


def build_once(marker: Path, build, timeout_s: float = 3600) -> None:
    """Global rank 0 runs `build` unless `marker` exists, holding a file lock beside it, then writes the marker; every
    other rank, on every node, waits for the marker. Keyed on the global rank, two nodes sharing a filesystem never
    build the same directory at once, and the lock keeps a second job on the same output_dir from racing the first.
    (A multi-node run needs its output_dir on a filesystem all nodes share: checkpoints and resume rely on it too.)"""
    if is_main_process():
        from filelock import FileLock

        marker.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{marker}.lock"):
            if not is_complete(marker):
                build()
                marker.mkdir(parents=True, exist_ok=True)
                mark_complete(marker)
        return
    waited = 0.0
    while not is_complete(marker):
        if waited > timeout_s:
            raise TimeoutError(
                f"rank {os.environ.get('RANK')}: gave up waiting for {marker} from rank 0 "
                "(is the output_dir on a filesystem every node shares?)"
            )
        time.sleep(0.5)
        waited += 0.5


def rank_and_world() -> tuple[int, int]:
    """This process's rank and the number of processes (the process group's, which DeepSpeed on CPU sets up even
    when accelerate reports a single process)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def gather_to_all(items: list) -> list:
    """Every rank's `items`, concatenated in rank order, on every rank."""
    import torch.distributed as dist

    _, world = rank_and_world()
    if world == 1:
        return list(items)
    parts: list = [None] * world
    dist.all_gather_object(parts, list(items))
    return [item for part in parts for item in part]


def close_process_group() -> None:
    """All ranks wait for the main process, then leave the process group together. A rank that exits
    while others still hold the group can abort in a communication thread's destructor ("terminate
    called without an active exception"), which the launcher reports as a failed run."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
