"""Giving back the memory a scored chunk freed, so that what one chunk freed does not add to the next one's peak.

What a chunk of pairs allocates (the encoder's activations, whose sizes change with each batch's longest text, the
similarity matrices, the texts and details) is freed when the chunk is written; glibc's malloc keeps much of it
(free blocks inside its heaps, which the next chunk's allocations of other sizes do not fit), so a process's resident
memory climbed chunk after chunk while what stayed live barely grew. `malloc_trim(0)` returns those free pages to the
system, so each chunk starts from what is live. The measurements are in docs/notes/finding-judge.md (Cost).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's malloc_trim, or None where the C library is not glibc (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> bool:
    """Collect unreachable cycles, then give the free pages of the C heap back to the system; whether the C library
    could (glibc). Values are untouched: this frees nothing that is still referenced."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
