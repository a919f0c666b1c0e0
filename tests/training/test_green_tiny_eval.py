"""GREEN agreement with intervals: bootstrap intervals over held-out pairs, the paired comparison with the constant
baseline, and the plain verdict the demo and the model card state."""

from radmetrics.inference.metrics.green.format import render_green_response
from radmetrics.training.green.evaluation import agreement_from_responses, beats_constant


def response(significant_b: int, matched: int) -> str:
    return render_green_response("x", {"b": ["omitted"] * significant_b}, {}, ["found"] * matched)


def test_intervals_bracket_the_values_and_the_paired_difference_is_model_minus_constant():
    teacher = [response(n % 4, 2) for n in range(40)]
    model = [response(n % 4, 2) if n % 5 else "no sections" for n in range(40)]  # exact where parsed; 8 unparsed
    results = agreement_from_responses(model, teacher, (1.0, 2.0), prefix="test_", intervals=True)
    assert results["test_parse_rate"] == 0.8 and results["test_bootstrap_resamples"] == 1000
    assert results["test_parse_rate_ci95_low"] < 0.8 < results["test_parse_rate_ci95_high"]
    assert results["test_significant_mae"] == 0 == results["test_significant_mae_ci95_high"]
    constant = results["test_significant_mae_constant_baseline"]
    assert results["test_significant_mae_minus_constant"] == -constant
    assert (
        results["test_significant_mae_minus_constant_ci95_high"] < 0
        and results["test_significant_mae_minus_constant_p_value"] < 0.01
    )
    assert results["test_matched_mae_minus_constant"] == 0  # both exact: no difference
    assert beats_constant(results) == "yes" and beats_constant(results, count="matched") == "no"


def test_a_constant_model_does_not_beat_its_constant_and_a_small_gain_is_not_shown():
    teacher = [response(n % 3, 1) for n in range(30)]
    constant_model = agreement_from_responses([response(1, 1)] * 30, teacher, (1.0, 1.0), intervals=True)
    assert constant_model["significant_mae_minus_constant"] == 0 and beats_constant(constant_model, prefix="") == "no"
    slightly_better = [response(n % 3, 1) if n == 0 else response(1, 1) for n in range(30)]
    small_gain = agreement_from_responses(slightly_better, teacher, (1.0, 1.0), intervals=True)
    assert small_gain["significant_mae_minus_constant"] < 0 and beats_constant(small_gain, prefix="") == "not shown"


def test_without_parsed_responses_there_is_no_verdict():
    results = agreement_from_responses(["garbage"] * 3, [response(1, 1)] * 3, (1.0, 1.0), intervals=True)
    assert results["parse_rate"] == 0 and "significant_mae" not in results
    assert beats_constant(results, prefix="").startswith("not measured")


def test_sft_final_evaluation_on_validation_alone_leaves_test_unseen(tmp_path):
    """Settings are chosen with `--final_eval_splits validation`: the run then holds no test number or generation."""
    from test_green import PRETRAIN, sft_args

    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.recipes import load_recipe

    pretrained = load_recipe("green/pretrain").main([*PRETRAIN, "--output_dir", str(tmp_path / "pretrain")]) / "final"
    run = load_recipe("green/sft").main(
        sft_args(pretrained, tmp_path / "sft", "--generation_eval_samples", "0", "--final_eval_splits", "validation")
    )
    results = read_eval_results(run)
    assert 1 <= results["validation_green_eval_pairs"] <= 4 and "validation_parse_rate_ci95_low" in results
    assert [key for key in results if key.startswith("test_")] == [
        "test_dropped_over_max_length"
    ]  # a count of pairs, no score
    assert (run / "validation_generations.jsonl").is_file() and not (run / "test_generations.jsonl").exists()
