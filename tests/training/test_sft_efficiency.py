"""The GREEN SFT recipe's efficiency options leave what it learns from unchanged: on a fixed batch, the loss of
BFD-packed rows (padding-free, no attention across documents) equals the padded batch's, with and without
the count-weighted loss; fused AdamW takes the steps plain AdamW takes; torch.compile computes the same loss (slow).
Liger's Triton kernels do not run on a CPU: benchmarks/gpu/sft_throughput.py checks their loss on the GPU first.
Everything is built by the recipe's own functions (training/green/sft.py, causal_lm.py)."""

from __future__ import annotations

import pytest

TRAIN_PAIRS = 6  # one batch holds them all, padded or packed: the loss is a mean over the same response tokens


@pytest.fixture(scope="module")
def recipe_data(tmp_path_factory):
    """(conversations, tokenizer, model arguments, workdir): programmatic-teacher pairs of the bundled corpus."""
    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_tokenizer
    from radmetrics.training.green.sft import GreenDataArguments, green_conversations, load_annotations

    workdir = tmp_path_factory.mktemp("sft_options")
    data_args = GreenDataArguments(heuristics=["remove_shuffle"], per_heuristic=30, max_train_samples=TRAIN_PAIRS)
    data, _ = load_annotations(data_args, str(workdir))
    model_args = CausalLMArguments(tiny_vocab_size=600, tiny_hidden_size=32)
    tokenizer = build_causal_tokenizer(model_args, [r["reference"] for r in data["train"]], str(workdir))
    options = type("Options", (), {"max_length": 2048, "dataset_num_proc": None})
    conversations, _ = green_conversations(data, tokenizer, data_args, options)
    return conversations, tokenizer, model_args, workdir


def recipe_trainer(recipe_data, name: str, count_token_weight: float = 1.0, **options):
    import torch
    from trl import SFTConfig

    from radmetrics.training.green.causal_lm import build_causal_lm
    from radmetrics.training.green.sft import build_sft_trainer

    conversations, tokenizer, model_args, workdir = recipe_data
    torch.manual_seed(0)
    model = build_causal_lm(model_args, tokenizer)
    args = SFTConfig(
        output_dir=str(workdir / name),
        per_device_train_batch_size=TRAIN_PAIRS,
        max_length=2048,
        learning_rate=1e-2,
        lr_scheduler_type="constant",
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        **options,
    )
    return build_sft_trainer(model, tokenizer, args, conversations, count_token_weight=count_token_weight)


def fixed_batch_loss(trainer) -> tuple[float, dict]:
    import torch

    batch = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    trainer.model.eval()
    with torch.no_grad():
        return float(trainer.compute_loss(trainer.model, batch)), batch


@pytest.mark.parametrize("count_token_weight", [1.0, 3.0])
def test_packed_rows_give_the_padded_batch_loss(recipe_data, count_token_weight):
    padded, padded_batch = fixed_batch_loss(recipe_trainer(recipe_data, "padded", count_token_weight))
    packed, batch = fixed_batch_loss(recipe_trainer(recipe_data, "packed", count_token_weight, packing=True))
    assert padded_batch["input_ids"].shape[0] == TRAIN_PAIRS and "attention_mask" in padded_batch
    # BFD packing makes padding-free rows: no attention mask, documents told apart by their position ids
    assert "attention_mask" not in batch and int((batch["position_ids"] == 0).sum()) == TRAIN_PAIRS
    assert packed == pytest.approx(padded, rel=1e-5)


def test_packed_documents_do_not_see_each_other(recipe_data):
    """Without the position ids that restart at each document, the same packed row attends across documents: the
    loss changes, so the equality above is a test that can fail."""
    trainer = recipe_trainer(recipe_data, "packed_check", packing=True)
    packed, batch = fixed_batch_loss(trainer)
    import torch

    batch["position_ids"] = torch.arange(batch["input_ids"].shape[1]).unsqueeze(0)
    with torch.no_grad():
        across = float(trainer.compute_loss(trainer.model, batch))
    assert across != pytest.approx(packed, rel=1e-5)


def test_fused_adamw_takes_plain_adamws_steps(recipe_data):
    """Three optimiser steps each way, then the loss on the fixed batch: equal to float tolerance (the fused kernel
    orders its arithmetic otherwise, so single weights differ in their last digits)."""
    losses = {}
    for optim in ("adamw_torch", "adamw_torch_fused"):
        trainer = recipe_trainer(recipe_data, optim, optim=optim, max_steps=3)
        trainer.train()
        losses[optim] = fixed_batch_loss(trainer)[0]
    untrained = fixed_batch_loss(recipe_trainer(recipe_data, "untrained"))[0]
    assert losses["adamw_torch_fused"] == pytest.approx(losses["adamw_torch"], rel=1e-5)
    assert losses["adamw_torch"] < untrained - 0.1  # the steps moved the weights


@pytest.mark.slow
def test_compiled_model_computes_the_same_loss(recipe_data):
    import torch

    trainer = recipe_trainer(recipe_data, "eager", packing=True)
    eager, batch = fixed_batch_loss(trainer)
    compiled = torch.compile(trainer.model)
    with torch.no_grad():
        loss = float(trainer.compute_loss(compiled, batch))
    assert loss == pytest.approx(eager, rel=1e-4)
