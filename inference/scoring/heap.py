"""Giving back the memory a scored chunk freed, so that what one chunk freed does not add to the next one's peak.

What a chunk of pairs allocates (the encoder's activations, whose sizes change with each batch's longest text, the
similarity matrices, the texts and details) is freed when the chunk is written; glibc's malloc keeps much of it
(free blocks inside its heaps, which the next chunk's allocations of other sizes do not fit), so a process's resident
memory climbed chunk after chunk while what stayed live barely grew. `malloc_trim(0)` returns those free pages to the
system, so each chunk starts from what is live.

Within a chunk, glibc's dynamic mmap threshold did the same: a freed mmapped block (an activation tensor) raises the
threshold to its size, so the next tensors of that size came from the heap, where blocks of the next batch's other
sizes did not fit the holes; the heap grew batch after batch (the transient 150-300 MiB above what is live), and by how
much varied chunk to chunk, so a run of more chunks peaked higher. `map_large_blocks` fixes the threshold: every block
of 128 KiB and up is mmapped and unmapped when freed. The measurements are in docs/notes/finding-judge.md (Cost).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from functools import cache

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's default starting threshold, here kept fixed


@cache
def _glibc(function: str):
    """glibc's `function` (malloc_trim, mallopt), or None where the C library is not glibc (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), function) if name else None
    except (OSError, AttributeError):
        return None


def map_large_blocks(threshold: int = MMAP_THRESHOLD) -> bool:
    """Have glibc mmap every block of `threshold` bytes and up, and unmap it when freed, for the rest of the process
    (setting it turns its dynamic raising off); whether the C library could (glibc). Values are untouched."""
    mallopt = _glibc("mallopt")
    return mallopt is not None and mallopt(M_MMAP_THRESHOLD, threshold) == 1


def release_freed_memory() -> bool:
    """Collect unreachable cycles, then give the free pages of the C heap back to the system; whether the C library
    could (glibc). Values are untouched: this frees nothing that is still referenced."""
    gc.collect()
    trim = _glibc("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True
