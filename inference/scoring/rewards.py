"""Any registered metric as a reward for reinforcement learning from metric feedback.

`MetricReward("radgraph_partial", components={"radgraph": "radgraph-xl"})` is a TRL reward function (TRL's
`GRPOTrainer(reward_funcs=[...])`): called with the batch's `completions` (strings, or conversations whose last
message is the answer) and the dataset's columns as keyword arguments, it scores every completion against the
reference in `reference_column` and returns one float per completion. The metric (and every metric it builds on,
e.g. RadCliQ's sub-scores) is constructed once and keeps its models loaded between calls; a batch is scored in one
call, so the metric's own batching applies. Lower-is-better keys (RadCliQ, FineRadScore, GREEN error counts) are
negated so that a higher reward is always better (`sign` overrides).

A completion the metric cannot score (an LLM judge that never gave a valid answer) gets a reward strictly below every
scored completion of its batch: the batch's lowest scored reward minus `unscorable_margin` (1.0 by default), or minus
the margin alone when nothing in the batch was scored. Under several processes the batch is every rank's share (the
minimum is reduced over the process group), since a GRPO group's completions can sit on different ranks. A fixed value
would not do: for a lower-is-better key every
scored reward is -value <= 0, so an unscorable completion given 0 would tie with a perfect report and beat every other
one, and a policy under GRPO would learn to write what the judge cannot answer (TRL's `nansum` turns a missing reward
into 0 as well). Each call counts its unscorable completions in `self.unscorable_count` and, under TRL's GRPOTrainer,
logs the batch's count as `<name>/unscorable_count` through the `log_metric` argument TRL passes to reward functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .registry import key_owner
from .scorer import Scorer


def completion_text(completion) -> str:
    """A completion as text: a string as it is, a conversation's last message content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content") or "")
    raise TypeError(f"a completion must be a string or a list of chat messages, got {type(completion).__name__}")


class MetricReward:
    def __init__(
        self,
        key: str,
        components: dict | None = None,
        options: dict | None = None,
        reference_column: str = "reference",
        sign: float | None = None,
        unscorable_margin: float = 1.0,
        endpoint=None,
        llm_cache=None,
    ):
        owner = key_owner().get(key)
        if owner is None:
            raise ValueError(f"{key!r} is not a score key; `radmetrics score --list` shows them")
        # the Scorer checks options, components and endpoint and builds the metrics once; they are reused on every call
        self._scorer = Scorer(
            [key],
            components,
            {owner: options or {}},
            n_bootstrap=0,
            endpoint=endpoint,
            llm_cache=llm_cache,
            progress=False,
        )
        self._upstream = self._scorer.upstream
        self._metrics = self._scorer.metrics()
        higher = self._metrics[-1].higher_is_better[key]
        self.key, self.owner, self.reference_column = key, owner, reference_column
        self.sign = (1.0 if higher else -1.0) if sign is None else float(sign)
        if not unscorable_margin > 0:
            raise ValueError(
                "unscorable_margin must be positive (an unscorable completion must rank below every scored one), "
                f"got {unscorable_margin}"
            )
        self.unscorable_margin, self.unscorable_count = float(unscorable_margin), 0
        self.__name__ = f"radmetrics_{key}"  # TRL logs each reward function under its __name__

    def __call__(self, prompts=None, completions: Sequence | None = None, **columns) -> list[float]:
        if completions is None:
            raise ValueError("a reward function is called with completions=[...]")
        if self.reference_column not in columns:
            raise KeyError(
                f"reward {self.__name__} reads the references from the dataset column {self.reference_column!r}, "
                f"which the batch lacks (columns: {sorted(columns)})"
            )
        references = [str(r) for r in columns[self.reference_column]]
        candidates = [completion_text(c) for c in completions]
        if len(references) != len(candidates):
            raise ValueError(f"{len(candidates)} completions but {len(references)} references")
        self._upstream.clear()
        for metric in self._metrics:
            self._upstream[metric.name] = metric(references, candidates)
        values = [
            None if value is None or not math.isfinite(value) else self.sign * float(value)
            for value in self._upstream[self.owner].per_sample[self.key]
        ]
        unscorable = sum(value is None for value in values)
        self.unscorable_count += unscorable
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            log_metric(f"{self.__name__}/unscorable_count", float(unscorable))
        floor = _global_min(min((value for value in values if value is not None), default=math.inf))
        floor = (floor if math.isfinite(floor) else 0.0) - self.unscorable_margin
        return [floor if value is None else value for value in values]


def _global_min(value: float) -> float:
    """The minimum over every process of the group: TRL's GRPO spreads one prompt's completions over ranks and scores
    each rank's share there, so the floor is taken over the whole gathered batch (every rank calls the reward)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return value
    import torch

    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MIN)
    return float(tensor.item())
