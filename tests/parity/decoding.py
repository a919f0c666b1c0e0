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
    """Inside `with`, every `generate` call follows `answers[call]` (the reference's new token ids, batch size 1;
    None: not followed).

    Afterwards: `mismatches` (real differences, one line each), `near_ties` (call, step, and how far the run's
    choice was ahead of the reference's token, in last places; 0: the reference's token was filtered out),
    `smallest_margin` (the smallest lead of an agreed decision over its runner-up among the tokens the processors
    keep, in last places) and `steps` (decisions checked)."""

    def __init__(
        self,
        answers: list[list[int]],
        ulps: float = DEFAULT_ULPS,
        dtype: torch.dtype = torch.bfloat16,
        perturb: Callable | None = None,
    ):
        self.answers, self.ulps, self.dtype, self.perturb = answers, ulps, dtype, perturb
        self.calls, self.steps, self.smallest_margin = 0, 0, math.inf
        self.mismatches: list[str] = []
        self.near_ties: list[tuple[int, int, float]] = []

    def __enter__(self) -> ReferenceDecoding:
        from transformers.generation.utils import GenerationMixin

        self._original = original = GenerationMixin._get_logits_processor
        follower = self

        def get_logits_processor(model, generation_config, *args, **kwargs):
            processors = original(model, generation_config, *args, **kwargs)
            call, follower.calls = follower.calls, follower.calls + 1
            return FollowingProcessors(processors, follower, call, generation_config)

        GenerationMixin._get_logits_processor = get_logits_processor
        return self

    def __exit__(self, *exc) -> None:
        from transformers.generation.utils import GenerationMixin

        GenerationMixin._get_logits_processor = self._original

    def decide(self, call: int, step: int, logits: torch.Tensor, process: Callable, sampled: bool, temperature: float):
        """The processed scores to hand back for one step (batch size 1): the run's own, or the reference's token
        forced at a near tie or a mismatch."""
        if self.perturb is not None:
            logits = self.perturb(logits)
        scores = process(logits.clone())
        expected = self.answers[call] if call < len(self.answers) else []
        if expected is None:  # not known for this call: its answer is compared whole, by the caller
            return scores
        if step >= len(expected):
            self.mismatches.append(f"call {call}: step {step} beyond the reference's {len(expected)} tokens")
            return scores
        reference, unit = expected[step], last_place(logits, self.dtype)
        noise = draw_noise(scores) if sampled else None
        keys = decision_keys(scores, noise)
        ours = own_decision(scores, noise)
        self.steps += 1
        if ours == reference:
            runner_up = keys.clone()
            runner_up[ours] = -math.inf
            lead = float(keys[ours] - runner_up.max()) * temperature / unit
            self.smallest_margin = min(self.smallest_margin, lead)
            return scores
        candidates, ahead = favouring(logits, reference, ours, noise, temperature, self.ulps * unit)
        if any(own_decision(process(favoured), noise) == reference for favoured in candidates):
            self.near_ties.append((call, step, ahead * temperature / unit))
        else:
            self.mismatches.append(f"call {call}: step {step} draws token {ours}, the reference {reference}")
        forced = torch.full_like(scores, -math.inf)
        forced[0, reference] = 0.0
        return forced


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

    def __init__(self, processors, follower: ReferenceDecoding, call: int, generation_config):
        super().__init__(processors)
        self.follower, self.call, self.step = follower, call, 0
        self.sampled = bool(generation_config.do_sample)
        self.temperature = float(generation_config.temperature or 1.0) if self.sampled else 1.0

    def __call__(self, input_ids, scores, **kwargs):
        if scores.shape[0] != 1:
            raise ValueError("ReferenceDecoding follows batch size 1 (one pair per generate call)")

        def process(logits):
            return super(FollowingProcessors, self).__call__(input_ids, logits, **kwargs)

        step, self.step = self.step, self.step + 1
        return self.follower.decide(self.call, step, scores, process, self.sampled, self.temperature)
