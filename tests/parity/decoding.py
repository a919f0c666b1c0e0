"""Follow a reference's decoding token by token, tolerating only what float kernels can change.

A prompt's token ids and the generation settings are exact on every CPU; the tokens a model draws are not. The
look-alikes decode in bf16, and oneDNN, MKL and ATen pick their kernels by vendor and instruction set (AVX2, AVX-512,
AVX512-BF16, AMX): the same logits differ in a last bit, and a decision that turns on such a bit, a sampled draw
whose two best candidates nearly tie or a greedy argmax over two near-equal logits, picks another token, after which
the answers part. Comparing answers by their hash then fails on one CPU and passes on another.

`ReferenceDecoding` wraps the logits processors of every `generate` call made inside it (one call per pair, in
order) and, at every step, from the logits of the run itself:

- takes the run's own decision: the greedy argmax, or the sampler's seeded draw recomputed. `torch.multinomial` with
  one sample is argmax(p / q) over q ~ Exp(1) drawn from the global generator (ATen's one-sample path); the q drawn
  here, with the generator's state saved and restored, is the q the real sampler draws next;
- when that decision is the reference's token, changes nothing: the model's own sampler or argmax picks it, so an
  answer that comes out as the reference's also shows that the recomputed draw is the sampler's. The margin (the
  decision's lead over the runner-up, in logit units) is recorded;
- when it is another token, asks whether the reference's token wins once every logit is moved by at most
  `ulps` units in the last place of the step's largest logit (in `dtype`) in one of the ways that favour it
  (`favouring`: its own logit up, its rivals down; the processors' top-k and top-p filters run on the moved
  logits). If so, the step is a near tie: recorded, and the reference's token is forced so that the
  rest of the answer stays comparable. If not, it is a mismatch: a real difference (another prompt, setting, seed,
  model or sampler), reported.

Kernel differences measured on the CRIMSON look-alike's logits (prompt of 2,400 tokens, 300 positions; Intel Xeon
with AMX, oneDNN forced to AVX2, AVX512_CORE, AVX512_CORE_BF16 and AVX512_CORE_AMX): at most one bf16 unit in the last
place of the largest logit; the default tolerance is two. With oneDNN's AVX512-BF16 kernels and no AMX (an AMD
EPYC's), the sampled look-alike's draw at pair 2, step 181 of the parity inputs leads the reference's token by 0.65 of
a last place and picks another token: the failure seen on an AMD EPYC, now a counted near tie.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from transformers.generation.logits_process import LogitsProcessorList

DEFAULT_ULPS = 2.0


def last_place(logits: torch.Tensor, dtype: torch.dtype) -> float:
    """One unit in the last place of `dtype` at the largest |logit| of the step."""
    largest = float(logits.abs().max())
    if largest == 0.0:
        return torch.finfo(dtype).tiny
    return torch.finfo(dtype).eps * 2.0 ** math.floor(math.log2(largest))


def kernel_noise(ulps: float, dtype: torch.dtype = torch.bfloat16, seed: int = 0) -> Callable:
    """Adds to every logit a uniform draw in +-`ulps` units in the last place (as `last_place`), from a generator of
    its own: the size of a kernel difference, without touching the generator the sampler draws from."""
    generator = torch.Generator().manual_seed(seed)

    def add(logits: torch.Tensor) -> torch.Tensor:
        scale = ulps * last_place(logits, dtype)
        return logits + (torch.rand(logits.shape, generator=generator) * 2 - 1).to(logits.dtype) * scale

    return add


class ReferenceDecoding:
    """Inside `with`, every `generate` call follows the reference's new token ids: `answers[i]` for the i-th row
    generated inside the block (rows of each call in order; a call of batch size 1 is one row; None: not followed,
    its answer compared whole by the caller). In a batch, a row whose reference answer has ended (its first end
    token; what follows is padding that `generate` writes whatever is decided) is not checked further. Sampled
    decoding is followed at batch size 1 only (the draw is recomputed for one row).

    Afterwards: `mismatches` (real differences, one line each), `near_ties` (answer, step, and how far the run's
    choice was ahead of the reference's token, in last places; 0: the reference's token was filtered out),
    `margins` (per answer, the smallest lead of an agreed decision over its runner-up among the tokens the processors
    keep, in last places), `smallest_margin` (the smallest of them) and `steps` (decisions checked). For each answer
    not followed, `unfollowed_margins`: the smallest lead of the run's own greedy decisions over their runner-up, in
    last places (-inf when sampled). A kernel can flip a greedy decision only if its lead is at most 2 x `ulps` (each
    logit moved by `ulps`), so an unfollowed greedy answer whose smallest lead is larger is decided the same on every
    CPU (`could_flip`)."""

    def __init__(
        self,
        answers: list[list[int] | None],
        ulps: float = DEFAULT_ULPS,
        dtype: torch.dtype = torch.bfloat16,
        perturb: Callable | None = None,
    ):
        self.answers, self.ulps, self.dtype, self.perturb = answers, ulps, dtype, perturb
        self.calls, self.rows, self.steps = 0, 0, 0
        self.mismatches: list[str] = []
        self.near_ties: list[tuple[int, int, float]] = []
        self.margins: dict[int, float] = {}
        self.unfollowed_margins: dict[int, float] = {}
        self._unfollowed_ended: set[int] = set()
        self._ends: dict[int, int | float] = {}

    @property
    def smallest_margin(self) -> float:
        return min(self.margins.values(), default=math.inf)

    def __enter__(self) -> ReferenceDecoding:
        from transformers.generation.utils import GenerationMixin

        self._original = original = GenerationMixin._get_logits_processor
        follower = self

        def get_logits_processor(model, generation_config, *args, **kwargs):
            processors = original(model, generation_config, *args, **kwargs)
            follower.calls += 1
            return FollowingProcessors(processors, follower, generation_config)

        GenerationMixin._get_logits_processor = get_logits_processor
        return self

    def __exit__(self, *exc) -> None:
        from transformers.generation.utils import GenerationMixin

        GenerationMixin._get_logits_processor = self._original

    def end(self, answer: int, ends: set[int]) -> int | float:
        """The step of the reference's end token in `answers[answer]` (inf: none)."""
        if answer not in self._ends:
            found = (step for step, token in enumerate(self.answers[answer]) if token in ends)
            self._ends[answer] = next(found, math.inf)
        return self._ends[answer]

    def watch(self, answer: int, logits: torch.Tensor, scores: torch.Tensor, noise, decoding: dict) -> None:
        """Keeps the smallest lead of an unfollowed row's own greedy decision over its runner-up, in last places (a row
        whose end token was decided is padding afterwards: not kept)."""
        if answer in self._unfollowed_ended:
            return
        if noise is not None:  # a sampled draw can also change with the top-k and top-p sets: not bounded here
            self.unfollowed_margins[answer] = -math.inf
            return
        keys, ours = decision_keys(scores, noise), own_decision(scores, noise)
        runner_up = keys.clone()
        runner_up[ours] = -math.inf
        lead = float(keys[ours] - runner_up.max()) * decoding["temperature"] / last_place(logits, self.dtype)
        self.unfollowed_margins[answer] = min(self.unfollowed_margins.get(answer, math.inf), lead)
        if ours in decoding["ends"]:
            self._unfollowed_ended.add(answer)

    def could_flip(self, answer: int) -> bool:
        """Whether a kernel difference could have changed an unfollowed answer: sampled, or one of its greedy decisions
        led by at most 2 x `ulps` last places."""
        return self.unfollowed_margins.get(answer, math.inf) <= 2 * self.ulps

    def claim(self, batch: int) -> int:
        """The index of the first of a new call's `batch` rows among the answers."""
        first, self.rows = self.rows, self.rows + batch
        return first

    def decide(self, first: int, step: int, logits: torch.Tensor, process: Callable, sampled: bool, decoding: dict):
        """The processed scores to hand back for one step of the rows `first`, `first + 1`, ...: the run's own, with
        the reference's token forced in a row at a near tie or a mismatch."""
        if self.perturb is not None:
            logits = self.perturb(logits)
        scores = process(logits.clone())
        noise = draw_noise(scores) if sampled else None
        for row in range(scores.shape[0]):
            forced = self.follow(first + row, step, logits, scores, row, process, noise, decoding)
            if forced is not None:
                scores[row] = -math.inf
                scores[row, forced] = 0.0
        return scores

    def follow(self, answer: int, step: int, logits, scores, row: int, process, noise, decoding: dict) -> int | None:
        """Checks one row's decision against the reference's token; returns the token to force, or None."""
        expected = self.answers[answer] if answer < len(self.answers) else []
        if expected is None:  # not known for this row: its answer is compared whole, by the caller
            row_noise = None if noise is None else noise[row : row + 1]
            self.watch(answer, logits[row], scores[row : row + 1], row_noise, decoding)
            return None
        if step >= len(expected):
            self.mismatches.append(f"answer {answer}: step {step} beyond the reference's {len(expected)} tokens")
            return None
        if step > self.end(answer, decoding["ends"]):  # the reference's answer ended: generate pads this row
            return None
        reference, unit, temperature = expected[step], last_place(logits[row], self.dtype), decoding["temperature"]
        row_noise = None if noise is None else noise[row : row + 1]
        keys = decision_keys(scores[row : row + 1], row_noise)
        ours = own_decision(scores[row : row + 1], row_noise)
        self.steps += 1
        if ours == reference:
            runner_up = keys.clone()
            runner_up[ours] = -math.inf
            lead = float(keys[ours] - runner_up.max()) * temperature / unit
            self.margins[answer] = min(self.margins.get(answer, math.inf), lead)
            return None
        candidates, ahead = favouring(logits[row : row + 1], reference, ours, row_noise, temperature, self.ulps * unit)
        if any(
            own_decision(process(in_batch(logits, row, favoured))[row : row + 1], row_noise) == reference
            for favoured in candidates
        ):
            self.near_ties.append((answer, step, ahead * temperature / unit))
        else:
            self.mismatches.append(f"answer {answer}: step {step} draws token {ours}, the reference {reference}")
        return reference


def in_batch(logits: torch.Tensor, row: int, replacement: torch.Tensor) -> torch.Tensor:
    """`logits` with row `row` replaced by `replacement` (1 x vocabulary), for the processors to run on the batch."""
    if logits.shape[0] == 1:
        return replacement
    changed = logits.clone()
    changed[row] = replacement[0]
    return changed


def favouring(logits: torch.Tensor, reference: int, chosen: int, noise, temperature: float, bound: float):
    """Logits within +-`bound` of these that favour `reference`, each a different way, with the reference's own
    raised in all: every other lowered (it gains on each); those whose key (unfiltered: logit / temperature - log q,
    or the logit when greedy) is ahead of it lowered and the rest raised (it gains on its rivals and the top-k and
    top-p sets' mass shifts its way); those ahead of it in key or above it in logit lowered and the rest raised (it
    climbs into the sets). The reference is a near tie when any of them makes it the decision: each is a move of
    every logit by at most `bound`. Also returns how far `chosen`'s key is ahead of the reference's (0 when behind:
    the reference's token was filtered out)."""
    keys = logits[0].double() / temperature
    if noise is not None:
        keys = keys - noise[0].double().log()
    ahead = keys >= keys[reference]
    above = ahead | (logits[0] >= logits[0, reference])
    candidates = []
    for lowered in (torch.ones_like(ahead), ahead, above):
        favoured = logits + bound
        favoured[0, lowered] = logits[0, lowered] - bound
        favoured[0, reference] = logits[0, reference] + bound
        candidates.append(favoured)
    return candidates, max(0.0, float(keys[chosen] - keys[reference]))


def draw_noise(scores: torch.Tensor) -> torch.Tensor:
    """The q ~ Exp(1) that `torch.multinomial(softmax(scores), 1)` draws next, drawn here without consuming it."""
    state = torch.get_rng_state()
    noise = torch.empty_like(scores).exponential_(1)
    torch.set_rng_state(state)
    return noise


def own_decision(scores: torch.Tensor, noise: torch.Tensor | None) -> int:
    """Row 0's token as `generate` picks it: argmax(scores), or argmax(softmax(scores) / q) as ATen's one-sample
    `torch.multinomial` computes it (float32)."""
    if noise is None:
        return int(scores[0].argmax())
    return int((torch.nn.functional.softmax(scores, dim=-1) / noise)[0].argmax())


def decision_keys(scores: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
    """What the decision maximises for row 0: the scores (greedy), or log p - log q (the one-sample draw
    argmax(p / q), in logs so that a lead reads in logit units once multiplied by the temperature)."""
    if noise is None:
        return scores[0].double()
    return (torch.log_softmax(scores[0].double(), dim=-1) - noise[0].double().log()).nan_to_num(nan=-math.inf)


class FollowingProcessors(LogitsProcessorList):
    """The `generate` call's own logits processors, then `ReferenceDecoding.decide` on what they return."""

    def __init__(self, processors, follower: ReferenceDecoding, generation_config):
        super().__init__(processors)
        self.follower, self.first, self.step = follower, None, 0
        self.sampled = bool(generation_config.do_sample)
        ends = generation_config.eos_token_id
        self.decoding = {
            "temperature": float(generation_config.temperature or 1.0) if self.sampled else 1.0,
            "ends": set(ends if isinstance(ends, list | tuple) else [] if ends is None else [ends]),
        }

    def __call__(self, input_ids, scores, **kwargs):
        if self.sampled and scores.shape[0] != 1:
            raise ValueError("ReferenceDecoding follows sampled decoding at batch size 1 (one pair per generate call)")
        if self.first is None:  # the call's first step: its rows take the next answers
            self.first = self.follower.claim(scores.shape[0])

        def process(logits):
            return super(FollowingProcessors, self).__call__(input_ids, logits, **kwargs)

        step, self.step = self.step, self.step + 1
        return self.follower.decide(self.first, step, scores, process, self.sampled, self.decoding)
