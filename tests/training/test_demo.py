"""`radmetrics demo` pieces that run in seconds: its configs and arguments parse, and its GREEN row says plainly
whether the short GREEN run beats its constant and whether its answers vary with the pair."""

import argparse
from collections import Counter

import pytest

from radmetrics.inference.metrics.green.format import render_green_response
from radmetrics.training import demo
from radmetrics.training.config import RecipeParser
from radmetrics.training.green.evaluation import agreement_from_responses


def response(significant_b: int) -> str:
    return render_green_response("x", {"b": ["omitted"] * significant_b}, {}, ["found"])


def sft_results(model_counts: list[int], teacher_counts: list[int]) -> dict:
    return agreement_from_responses(
        [response(n) for n in model_counts],
        [response(n) for n in teacher_counts],
        (1.0, 1.0),
        prefix="test_",
        intervals=True,
    )


@pytest.mark.parametrize("recipe", ["rate_ner/iob", "rate_ner/span", "chexbert/finetune", "radgraph/train"])
def test_encoder_configs_of_the_demo_exist(recipe):
    assert demo.encoder_config(recipe).is_file(), f"demo.ENCODER_SCALES[{recipe!r}] names no config"


def test_green_stage_arguments_parse(tmp_path):
    from radmetrics.training.green import sft

    model_args, data_args, training_args, *_ = RecipeParser(sft.ARGUMENT_TYPES).parse_recipe_args(
        demo.green_sft_args(tmp_path)
    )
    assert model_args.model_name_or_path == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert data_args.max_train_samples == demo.DEMO_GREEN_TRAIN_PAIRS and data_args.pairs_dir == str(
        tmp_path / "pairs"
    )
    # no final evaluation: the stage scores the export, and the same answers measure it (nothing generated twice)
    assert data_args.final_eval_samples == 0 and training_args.save_strategy == "no"
    assert (
        training_args.learning_rate == demo.DEMO_GREEN_LEARNING_RATE and training_args.lr_scheduler_type == "constant"
    )
    # the findings prompt (the semantic teacher judges findings: issue 64's check refuses GREEN's prompt on them) and
    # the teacher's summary explanation: a walkthrough looped in 8 steps (training/demo.py says how)
    assert data_args.prompt == demo.DEMO_GREEN_PROMPT == "findings" and demo.DEMO_GREEN_EXPLANATION == "summary"
    assert training_args.max_length == demo.DEMO_GREEN_MAX_LENGTH == 1536
    # one conversation at a time: the demo's peak memory stays under 8 GiB
    assert training_args.per_device_train_batch_size == 1
    assert training_args.gradient_accumulation_steps == demo.DEMO_GREEN_ACCUMULATION


def test_green_row_states_whether_the_model_beats_its_constant_and_varies():
    teacher = [n % 4 for n in range(40)]
    same = demo.green_row(sft_results([1] * 40, teacher), Counter({1: 40}))
    assert (
        "beats its constant: NO" in same
        and "answers do NOT vary with the pair (significant count 1 for all 40 parsed)" in same
    )
    exact = demo.green_row(sft_results(teacher, teacher), Counter(teacher))
    assert "beats its constant: YES" in exact and "answers vary with the pair" in exact
    unparsed = agreement_from_responses(["garbage"] * 3, [response(1)] * 3, (1.0, 1.0), prefix="test_", intervals=True)
    assert "beats its constant: NOT MEASURED" in demo.green_row(unparsed, Counter())


def test_demo_table_says_when_green_does_not_beat_its_constant(tmp_path, monkeypatch, capsys):
    def green(out, state):
        results = sft_results([1] * 20, [n % 3 for n in range(20)])
        state["green_verdict"] = "no"
        state["green_table"] = "| score | value | 95% CI | n |"
        return demo.green_row(results, Counter({1: 20}))

    monkeypatch.setattr(demo, "stages", lambda: [demo.Stage("train+export: GREEN", green)])
    assert demo.run(argparse.Namespace(out=str(tmp_path / "demo"), endpoint=None)) == 0
    printed = capsys.readouterr().out
    assert "| train+export: GREEN | ok |" in printed and "beats its constant: NO" in printed
    assert "green: the demo's short GREEN run does not beat its constant" in printed
