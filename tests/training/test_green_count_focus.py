"""count_focus.py: the digit-weighted loss is the model's own loss at weight 1 and weights only digit targets
otherwise, and the even draw gives each significant-total bin its share."""

import pytest
import torch
from datasets import Dataset

from radmetrics.inference.metrics.green.format import parse_green_response, render_green_response
from radmetrics.training.green.count_focus import count_weighted_loss, digit_token_mask, draw_training_pairs


def response(significant: int) -> str:
    return render_green_response("", {"a": [f"finding {i}" for i in range(significant)]}, {}, ["The lungs are clear."])


def test_even_draw_gives_each_significant_bin_its_share_and_shares_out_a_shortfall():
    totals = [0] * 50 + [1] * 30 + [2] * 4 + [3] * 10 + [7] * 10
    train = Dataset.from_dict(
        {"response": [response(t) for t in totals] + ["not a GREEN answer"], "id": list(range(len(totals) + 1))}
    )
    drawn = draw_training_pairs(train, 40, "even_significant")
    bins = [min(parse_green_response(r).significant_total, 3) for r in drawn["response"]]
    assert len(drawn) == 40 and "not a GREEN answer" not in drawn["response"]
    assert [bins.count(b) for b in range(4)] == [12, 12, 4, 12]  # bin 2 has 4; its shortfall goes to the others
    assert drawn["id"] == draw_training_pairs(train, 40, "even_significant")["id"]  # seeded
    shuffled = draw_training_pairs(train, 40, "shuffled")
    assert shuffled["id"] == train.shuffle(seed=0).select(range(40))["id"]


class Digits:
    """A tokenizer stand-in whose vocabulary has digits with and without a space marker."""

    vocab = {"0": 0, "Ġ7": 1, "a": 2, "Ġfinding": 3, "12": 4, "²": 5}

    def __len__(self):
        return len(self.vocab)

    def get_vocab(self):
        return self.vocab

    def convert_tokens_to_string(self, tokens):
        return "".join(tokens).replace("Ġ", " ")


def test_digit_tokens_are_ascii_digits_with_or_without_a_space_marker():
    assert digit_token_mask(Digits()).tolist() == [True, True, False, False, True, False]


def test_weight_one_is_the_models_own_loss_and_a_weight_scales_only_digit_targets():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=6,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    ).eval()
    input_ids = torch.tensor([[2, 3, 0, 1, 4, 3], [3, 2, 1, 2, 5, 0]])
    labels = input_ids.clone()
    labels[:, :2] = -100  # the prompt
    with torch.no_grad():
        output = model(input_ids=input_ids, labels=labels)
    digits = digit_token_mask(Digits())
    assert count_weighted_loss(output.logits, labels, digits, 1.0).item() == pytest.approx(
        output.loss.item(), rel=1e-6
    )
    per_token = torch.nn.functional.cross_entropy(
        output.logits[:, :-1].transpose(1, 2), labels[:, 1:].clamp(min=0), reduction="none"
    )
    kept = labels[:, 1:] != -100
    weights = torch.where(digits[labels[:, 1:].clamp(min=0)], 5.0, 1.0) * kept
    expected = (per_token * weights).sum() / kept.sum()
    assert count_weighted_loss(output.logits, labels, digits, 5.0).item() == pytest.approx(expected.item(), rel=1e-6)
    assert count_weighted_loss(output.logits, labels, digits, 5.0, num_items_in_batch=20).item() == pytest.approx(
        (per_token * weights).sum().item() / 20, rel=1e-6
    )
