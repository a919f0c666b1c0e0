"""Two ways to make a small GREEN model learn the counts rather than the format (benchmarks/README.md, GREEN small).

- `count_token_weight`: a GREEN response is about two hundred tokens of boilerplate and quotes, of which a dozen digits
  are the counts the metric reads. The mean token loss lets the boilerplate dominate; this weights every digit token of
  the response (the counts, and any digit a quote copies) by the given factor. The sum is still divided by the number
  of response tokens, as TRL's own plain (`nll`) loss is, so a weight of 1 is TRL's loss (tested against the trainer's
  own `compute_loss` on one batch). The trainer refuses the settings TRL's loss has and this one does not (other loss
  types, label smoothing, a custom loss function, MoE auxiliary losses), and TRL's entropy and token-accuracy logs are
  not written on this path.
- `train_draw: even_significant`: the programmatic teacher's training pairs have 0 significant errors most often, and
  greedy decoding under weak evidence answers the training mode. This draws the `max_train_samples` training pairs
  evenly over the teacher's significant-error totals 0, 1, 2 and 3 or more (it needs `max_train_samples`). Pairs over
  `max_length` are dropped after the draw, so a bin can end a few short: the run manifest records each bin's count.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from radmetrics.inference.metrics.green.format import parse_green_response

TRAIN_DRAWS = ("shuffled", "even_significant")
SIGNIFICANT_BINS = 4  # totals 0, 1, 2 and 3 or more


def significant_bin(response: str) -> int | None:
    """The response's significant-error total, capped at SIGNIFICANT_BINS - 1 (None: it does not parse; an LLM
    teacher's response can fail to)."""
    parsed = parse_green_response(response)
    return min(parsed.significant_total, SIGNIFICANT_BINS - 1) if parsed.parsed else None


def significant_bins(responses) -> dict[str, int]:
    """How many responses fall in each bin ("0", "1", "2", "3+"; unparsed ones are left out)."""
    counts = Counter(filter(lambda b: b is not None, map(significant_bin, responses)))
    return {(f"{b}+" if b == SIGNIFICANT_BINS - 1 else str(b)): counts[b] for b in range(SIGNIFICANT_BINS)}


def draw_training_pairs(train, limit: int, draw: str, seed: int = 0):
    """`limit` training records: a seeded shuffle (`shuffled`), or equal shares of each significant-total bin
    (`even_significant`; a bin with too few records gives all it has, and the rest is shared over the others)."""
    shuffled = train.shuffle(seed=seed)
    if draw == "shuffled":
        return shuffled.select(range(min(limit, len(shuffled))))
    bins: dict[int, list[int]] = defaultdict(list)
    for index, response in enumerate(shuffled["response"]):
        found = significant_bin(response)
        if found is not None:
            bins[found].append(index)
    chosen: list[int] = []
    remaining = min(limit, sum(map(len, bins.values())))
    for position, members in enumerate(
        sorted(bins.values(), key=len)
    ):  # smallest bins first, so their shortfall is shared out
        share = min(len(members), remaining // (len(bins) - position))
        chosen += members[:share]
        remaining -= share
    return shuffled.select(sorted(chosen))


def digit_token_mask(tokenizer):
    """A boolean vector over the vocabulary: tokens that are ASCII digits once a leading space marker is stripped."""
    import torch

    mask = torch.zeros(len(tokenizer), dtype=torch.bool)
    for token, index in tokenizer.get_vocab().items():
        text = tokenizer.convert_tokens_to_string([token]).strip()
        mask[index] = bool(text) and text.isascii() and text.isdigit()
    return mask


def count_weighted_loss(logits, labels, digit_tokens, weight: float, num_items_in_batch=None):
    """Next-token cross-entropy over the unmasked labels (-100 is masked), each digit target weighted by `weight`,
    summed and divided by `num_items_in_batch` (TRL and Trainer pass the batch's response-token count across gradient
    accumulation) or by this batch's unmasked count."""
    import torch
    import torch.nn.functional as F

    targets = labels[:, 1:]
    kept = targets != -100
    kept_targets = targets[kept]  # only the response positions are cast to fp32 (a 49k-token vocabulary is large)
    losses = F.cross_entropy(logits[:, :-1][kept].float(), kept_targets, reduction="none")
    weights = torch.where(digit_tokens.to(kept_targets.device)[kept_targets], weight, 1.0)
    count = kept.sum() if num_items_in_batch is None else torch.as_tensor(num_items_in_batch, device=losses.device)
    return (losses * weights).sum() / count.clamp(min=1)
