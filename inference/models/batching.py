"""Batches without padding: inputs grouped by exact token length.

Reference implementations that run one input at a time (f1chexbert, radgraph, RaTEScore's NER) are reproduced
bit for bit by batching only inputs of equal length: no padding enters the computation, while a batch still
amortises the model call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence


def equal_length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped by equal `lengths`, at most `batch_size` per batch, longest first."""
    groups: dict[int, list[int]] = defaultdict(list)
    for index, length in enumerate(lengths):
        groups[length].append(index)
    return [
        members[start : start + batch_size]
        for length in sorted(groups, reverse=True)
        for members in (groups[length],)
        for start in range(0, len(members), batch_size)
    ]
