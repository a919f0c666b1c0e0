"""radmetrics metrics as reinforcement-learning rewards (TRL reward functions), and a few GRPO steps with one."""

import math

import pytest

from radmetrics.inference.scoring.rewards import MetricReward


def test_reward_function_contract():
    reward = MetricReward("rougeL")
    assert reward.__name__ == "radmetrics_rougeL"
    refs = ["Mild cardiomegaly.", "No pleural effusion."]
    assert reward(prompts=["p", "p"], completions=["Mild cardiomegaly.", "Lungs clear."], reference=refs) == [1.0, 0.0]
    conversation = [
        [{"role": "assistant", "content": "Mild cardiomegaly."}],
        [{"role": "assistant", "content": "No pleural effusion."}],
    ]
    assert reward(completions=conversation, reference=refs) == [1.0, 1.0]
    assert (
        reward(completions=["", "No pleural effusion."], reference=refs)[1] == 1.0
    )  # an empty completion still gets a reward
    with pytest.raises(KeyError, match="dataset column 'reference'"):
        reward(completions=["x"], findings=["x"])
    with pytest.raises(ValueError, match="not a score key"):
        MetricReward("rouge")


def test_lower_is_better_keys_are_negated(tmp_path):
    from radmetrics.inference.metrics.base import MetricOutput

    reward = MetricReward("bleu2", sign=-1.0)
    assert reward(completions=["Mild cardiomegaly."], reference=["Mild cardiomegaly."]) == [-1.0]
    # a batch where nothing could be scored: every completion gets minus the margin (the rule: test_faithful_inputs.py)
    reward = MetricReward("bleu2", unscorable_margin=5.0)
    reward._metrics[0].compute = lambda refs, cands: MetricOutput({"bleu2": [math.nan] * len(refs)})
    assert reward(completions=["x"], reference=["y"]) == [-5.0] and reward.unscorable_count == 1


def test_grpo_steps_with_a_radmetrics_reward(iu_reports, tmp_path):
    """A tiny random policy trained for a few GRPO steps (TRL, CPU) with ROUGE-L against the reference as reward."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from radmetrics.training.tiny import tiny_llama_config, train_bpe_tokenizer

    texts = [r.text for r in iu_reports[:300]]
    tokenizer = train_bpe_tokenizer(texts, tmp_path / "tokenizer", vocab_size=600)
    torch.manual_seed(0)
    policy = AutoModelForCausalLM.from_config(
        tiny_llama_config(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    )
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    data = Dataset.from_dict({"prompt": ["Findings:"] * 8, "reference": texts[:8]})
    reward = MetricReward("rougeL")
    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=12,
        max_steps=3,
        learning_rate=1e-2,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=0,
        bf16=False,
    )
    trainer = GRPOTrainer(
        model=policy, reward_funcs=[reward], args=args, train_dataset=data, processing_class=tokenizer
    )
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "rewards/radmetrics_rougeL/mean" in entry]
    assert len(logged) == 3 and all(0.0 <= entry["rewards/radmetrics_rougeL/mean"] <= 1.0 for entry in logged)
    assert any(not torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())


def test_rewards_and_a_scorer_on_one_component_load_it_once(tmp_path, monkeypatch):
    """Two rewards built on RadGraph (different keys) and a Scorer beside them load the model once per process
    (RadEval loads it once per reward)."""
    from parity import lookalikes

    from radmetrics.inference.metrics.radgraph import dygie
    from radmetrics.inference.scoring.scorer import Scorer

    lookalikes.build_radgraph(tmp_path, "radgraph-xl", 11)
    loads = []
    original = dygie.RadGraphDyGIE.from_component.__func__
    monkeypatch.setattr(
        dygie.RadGraphDyGIE, "from_component", classmethod(lambda cls, *a: loads.append(a) or original(cls, *a))
    )
    components = {"radgraph": str(lookalikes.snapshot(tmp_path, lookalikes.RRG) / "radgraph-xl.tar.gz")}
    options = {"base_model": str(lookalikes.snapshot(tmp_path, lookalikes.RADGRAPH_BASES["radgraph-xl"]))}
    completions, references = (
        ["Small left pleural effusion.", "Lungs are clear."],
        [
            "Left effusion.",
            "No pneumothorax.",
        ],
    )
    partial = MetricReward("radgraph_partial", components, options)(completions=completions, reference=references)
    complete = MetricReward("radgraph_complete", components, options)(completions=completions, reference=references)
    scored = Scorer(["radgraph"], components, {"radgraph": options}, n_bootstrap=0)(references, completions)
    assert len(loads) == 1
    assert partial == [row["radgraph_partial"] for row in scored.per_sample]
    assert complete == [row["radgraph_complete"] for row in scored.per_sample]
