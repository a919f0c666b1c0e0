"""parity/decoding.py: following a reference's decoding tolerates a float kernel's last-bit differences in the logits
and nothing larger (the released look-alikes' parity tests rest on it; tests/inference/test_crimson.py runs it on
the CRIMSON look-alike)."""

import math

import torch
from parity.decoding import ReferenceDecoding, draw_noise, kernel_noise, last_place, own_decision
from transformers.generation.logits_process import (
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

VOCAB = 1500
SAMPLER = LogitsProcessorList([TemperatureLogitsWarper(0.7), TopKLogitsWarper(64), TopPLogitsWarper(0.95)])


def sampler(logits):
    return SAMPLER(None, logits)


def test_the_recomputed_draw_is_torch_multinomials():
    torch.manual_seed(3)
    for _ in range(200):
        scores = sampler(torch.randn(1, VOCAB) * 4)
        ours = own_decision(scores, draw_noise(scores))
        assert ours == int(torch.multinomial(torch.softmax(scores, dim=-1), 1))


def test_last_place_is_the_unit_of_the_largest_logit():
    assert last_place(torch.tensor([[-17.875, 3.0]]), torch.bfloat16) == 0.125
    assert last_place(torch.tensor([[1.5, 0.1]]), torch.bfloat16) == 2.0**-7
    assert last_place(torch.tensor([[16.0]]), torch.float32) == 16 * 2.0**-23


GREEDY = {"temperature": 1.0, "ends": {2}}


def greedy_step(decoding, logits, step: int = 0):
    return decoding.decide(0, step, logits, lambda x: x, False, GREEDY)


def test_a_greedy_near_tie_is_tolerated_and_forced_and_a_real_lead_is_not():
    logits = torch.zeros(1, 8)
    logits[0, 3], logits[0, 7] = 10.0, 10.0 - 0.03125  # half a bf16 last place at 10 (0.0625)
    decoding = ReferenceDecoding([[7]])
    forced = greedy_step(decoding, logits)
    assert int(forced.argmax()) == 7 and decoding.mismatches == []
    assert decoding.near_ties == [(0, 0, 0.5)]
    logits[0, 7] = 10.0 - 0.3125  # 5 last places behind: beyond the 2 + 2 a kernel can move two logits
    decoding = ReferenceDecoding([[7]])
    greedy_step(decoding, logits)
    assert decoding.mismatches == ["answer 0: step 0 draws token 3, the reference 7"]
    decoding = ReferenceDecoding([[3]])
    assert torch.equal(greedy_step(decoding, logits), logits)  # agreed: the run's own scores, its margin kept
    assert decoding.smallest_margin == 5.0 and decoding.near_ties == []


def sampled_runs(steps: int, perturb, reference_of=None, seed: int = 0):
    """`steps` sampled decisions: the reference's token is drawn from clean logits (or `reference_of(scores)`), the
    follower sees `perturb(logits)`; the global generator is reseeded per step as both draw from it."""
    generator, references, logits_seen = torch.Generator().manual_seed(seed), [], []
    for _ in range(steps):
        logits = torch.randn(1, VOCAB, generator=generator).to(torch.bfloat16).float() * 4
        torch.manual_seed(len(references))
        scores = sampler(logits)
        references.append(reference_of(scores) if reference_of else own_decision(scores, draw_noise(scores)))
        logits_seen.append(logits)
    decoding = ReferenceDecoding([references], perturb=perturb)
    for step, logits in enumerate(logits_seen):
        torch.manual_seed(step)
        decoding.decide(0, step, logits, sampler, True, {"temperature": 0.7, "ends": set()})
    return decoding


def test_kernel_sized_noise_flips_sampled_draws_and_every_flip_is_tolerated():
    decoding = sampled_runs(500, kernel_noise(1.0))
    assert decoding.mismatches == [] and decoding.steps == 500
    assert len(decoding.near_ties) >= 2  # the noise does flip draws: without the tolerance they would fail
    assert all(lead >= 0 for _, _, lead in decoding.near_ties)


def test_noise_beyond_the_tolerance_and_a_wrong_token_are_mismatches():
    assert sampled_runs(200, kernel_noise(40.0)).mismatches != []
    rank_ten = lambda scores: int(torch.topk(scores[0], 10).indices[-1])  # noqa: E731 - a kept, unlikely token
    decoding = sampled_runs(50, None, reference_of=rank_ten)
    assert len(decoding.mismatches) >= 45 and decoding.near_ties == []


def test_a_step_past_the_references_end_is_a_mismatch():
    decoding = ReferenceDecoding([[]])
    greedy_step(decoding, torch.zeros(1, 4))
    assert decoding.mismatches == ["answer 0: step 0 beyond the reference's 0 tokens"]
    assert decoding.smallest_margin == math.inf


def test_a_batch_follows_one_answer_per_row_until_each_ends():
    """Rows of a call take the next answers in order; a row's steps after its reference's end token (2) are padding
    that generate writes whatever is decided, and are not checked."""
    decoding = ReferenceDecoding([[3, 2, 2], [5, 5, 5]])
    first = decoding.claim(2)
    logits = torch.zeros(2, 8)
    logits[0, 3], logits[1, 5] = 1.0, 1.0
    assert torch.equal(decoding.decide(first, 0, logits, lambda x: x, False, GREEDY), logits)
    logits = torch.zeros(2, 8)
    logits[0, 2], logits[1, 4], logits[1, 5] = 1.0, 1.0, 1.0 - 2**-22  # row 1: a float32 near tie, forced
    ties = ReferenceDecoding([[3, 2, 2], [5, 5, 5]], dtype=torch.float32)
    ties.claim(2)
    forced = ties.decide(0, 1, logits, lambda x: x, False, GREEDY)
    assert ties.near_ties == [(1, 1, 2.0)] and ties.mismatches == []
    assert torch.equal(forced[0], logits[0]) and int(forced[1].argmax()) == 5 and forced[1].isinf().sum() == 7
    logits[1, 5] = 0.0  # row 1 now a real difference; row 0 has ended, so its step 2 is not checked
    ties.decide(0, 2, logits, lambda x: x, False, GREEDY)
    assert ties.mismatches == ["answer 1: step 2 draws token 4, the reference 5"] and ties.steps == 3
    assert set(decoding.margins) == {0, 1} and decoding.smallest_margin == 1.0 / last_place(logits[0], torch.bfloat16)


def test_an_unfollowed_greedy_answer_keeps_its_smallest_lead_until_it_ends():
    """An answer known as text only is not followed: its own decisions' smallest lead says whether a kernel (each logit
    moved by `ulps` last places) could have flipped it; after its end token the row is padding and not watched."""
    decoding = ReferenceDecoding([None], dtype=torch.float32)  # ulps 2: a lead of at most 4 last places can flip
    first, step = decoding.claim(1), lambda logits, n: decoding.decide(first, n, logits, lambda x: x, False, GREEDY)
    logits = torch.zeros(1, 8)
    logits[0, 3], logits[0, 4] = 1.0, 1.0 - 8 * 2**-23  # 8 float32 last places at 1.0
    assert torch.equal(step(logits, 0), logits) and not decoding.could_flip(0)
    logits[0, 2], logits[0, 3] = 2.0, 2.0 - 3 * 2**-22  # its end token, 3 last places ahead
    step(logits, 1)
    logits[0, 5] = 2.0 - 2**-22  # padding: not watched
    step(logits, 2)
    assert decoding.unfollowed_margins == {0: 3.0} and decoding.could_flip(0)
    assert decoding.steps == 0 and decoding.mismatches == [] and decoding.margins == {}
