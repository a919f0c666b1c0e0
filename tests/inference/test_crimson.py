"""CRIMSON (inference/metrics/crimson): the reference's prompt, parser and score (crimson-score 0.2.0), without the
reference package, and the metric through a scripted OpenAI-compatible judge."""

import hashlib
import json

import pytest
from llm_fault_server import FaultServer

from radmetrics.inference.metrics.crimson.metric import REFERENCE_REQUEST, evaluate_answer
from radmetrics.inference.metrics.crimson.parse import CrimsonParseError, parse_crimson_answer
from radmetrics.inference.metrics.crimson.prompt import crimson_messages, user_prompt
from radmetrics.inference.metrics.crimson.score import crimson_score
from radmetrics.inference.scoring.scorer import Scorer

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)

REFERENCE = "Cardiomegaly. Small bilateral pleural effusions."
CANDIDATE = "Normal heart size. Small left pleural effusion."
CONTEXT = {"Age": "82", "Indication": "Routine preoperative evaluation"}


@pytest.mark.parametrize(
    ("reference", "context", "guidelines", "sha256"),
    [
        # sha256 of CRIMSON.prompt_parts.build_prompt(...) as crimson-score 0.2.0 assembles it
        (REFERENCE, CONTEXT, False, "216a10920243e01968ab1dad7dfba125a78ad57a5446ac09038fe01681981fb9"),
        (REFERENCE, CONTEXT, True, "8fdc0cf176b13b1dc5d341e17fb3aa640a5508d59b0d1c1708810c4b8ec99424"),
        (["Cardiomegaly.", "Small effusion."], None, True, None),
    ],
)
def test_the_prompt_is_the_references(reference, context, guidelines, sha256):
    prompt = user_prompt(reference, CANDIDATE, context, guidelines)
    if sha256:
        assert hashlib.sha256(prompt.encode()).hexdigest() == sha256
    else:
        assert "Reference Findings (Ground Truth):\nCardiomegaly. Small effusion.\n" in prompt
        assert "Context guidelines" not in prompt  # only with a context
    assert '{{"reference_findings"' not in prompt and prompt.count("{{") == 9  # literal, never formatted
    system = crimson_messages(reference, CANDIDATE)[0]
    assert system == {
        "role": "system",
        "content": "You are an expert radiology evaluator that assesses the accuracy of radiology reports.",
    }


def evaluation(references, predictions, matched=(), false=(), missing=(), attributes=()):
    return {
        "reference_findings": [{"id": i, "finding": i, "clinical_significance": s} for i, s in references],
        "predicted_findings": [{"id": i, "finding": i, "clinical_significance": s} for i, s in predictions],
        "matched_findings": [{"ref_id": r, "pred_id": p} for r, p in matched],
        "errors": {
            "false_findings": list(false),
            "missing_findings": list(missing),
            "attribute_errors": [
                {"ref_id": r, "pred_id": p, "severity": s, "error_types": ["location"]} for r, p, s in attributes
            ],
        },
    }


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (evaluation([("R1", "urgent")], [("P1", "urgent")], [("R1", "P1")]), 1.0),
        (evaluation([], []), 1.0),
        (evaluation([("R1", "urgent")], [], missing=["R1"]), 0.0),  # a normal template
        (evaluation([], [("P1", "urgent")], false=["P1"]), -0.5),
        (evaluation([], [("P1", "benign_expected")], false=["P1"]), 1.0),
        (
            evaluation(
                [("R1", "urgent")], [("P1", "urgent")], [("R1", "P1")], attributes=[("R1", "P1", "significant")]
            ),
            0.6667,
        ),
        (
            evaluation(
                [("R1", "urgent")], [("P1", "urgent")], [("R1", "P1")], attributes=[("R1", "P1", "negligible")]
            ),
            1.0,
        ),
        (evaluation([("R1", "urgent")], [("P1", "urgent")], [("R1", "P1")], attributes=[("R1", "P1", "odd")]), 0.8),
        (evaluation([("R1", "actionable_not_urgent")], [("P1", "x"), ("P2", "x")], [("R1", "P1"), ("R1", "P2")]), 1.0),
        (
            evaluation(
                [("R1", "actionable_not_urgent"), ("R2", "urgent")],
                [("P1", "x"), ("P2", "urgent"), ("P3", "urgent")],
                [("R1", "P1")],
                false=["P2", "P3"],
                missing=["R2"],
            ),
            -0.6,
        ),
        (evaluation([("R1", "urgent")], [("P1", "urgent")], false=["P1", "P1"], missing=["R1"]), -0.6667),
    ],
)
def test_the_score_follows_the_references_formula(case, expected):
    assert crimson_score(case)["crimson_score"] == expected


def test_counts_and_weighted_counts():
    scored = crimson_score(
        evaluation(
            [("R1", "urgent"), ("R2", "actionable_not_urgent")],
            [("P1", "urgent"), ("P2", "not_actionable_not_urgent")],
            [("R1", "P1")],
            false=["P2"],
            missing=["R2"],
            attributes=[("R1", "P1", "significant")],
        )
    )
    assert scored["error_counts"]["false_findings"] == 1 and scored["error_counts"]["location_errors"] == 1
    assert scored["weighted_error_counts"] == {
        "false_findings": 0.25,
        "missing_findings": 0.5,
        "attribute_errors": 0.5,
    }
    assert scored["matched_findings"] == 1


@pytest.mark.parametrize(
    ("answer", "check"),
    [
        ('{"a": "patient\u2019s"}', lambda v: v == {"a": "patient\\'s"}),  # the reference's literal backslash
        ('{"e": "size 3, large"}', lambda v: v == {"e": 'size 3, "large'}),  # its missing-quote rule on a value
        ('{"a": 1, "a": 2}', lambda v: v == {"a": 1}),  # the first of a repeated key
        ('{"ids": ["P1","P2","P3","P4"], "x": "bad \\L"}', lambda v: v["ids"] == ["P1", "P2", "P3", "P4"]),
        ('{"x": "he said "no" today"}', lambda v: v == {"x": 'he said "no" today'}),
    ],
)
def test_the_parser_repairs_as_the_reference_does(answer, check):
    assert check(parse_crimson_answer(answer))


@pytest.mark.parametrize(
    "answer", ['```json\n{"a": 1}\n```', 'Here it is: {"a": 1}', '{"a": [1, 2,]}', '{"reference_findings": [', ""]
)
def test_what_the_reference_cannot_read_is_refused(answer):
    with pytest.raises(CrimsonParseError):
        parse_crimson_answer(answer)


def test_an_evaluation_the_reference_cannot_score_is_refused():
    with pytest.raises(CrimsonParseError, match="cannot be scored"):
        evaluate_answer('{"reference_findings": [{"finding": "x"}]}')  # no id: the reference raises KeyError


def scripted_judge(messages):
    prompt = messages[-1]["content"]
    if "Predicted Findings (Candidate):\nGarbled" in prompt:
        return "The findings match."  # prose: unreadable
    if "Predicted Findings (Candidate):\nSmall left pleural effusion." in prompt:
        return json.dumps(
            evaluation([("R1", "actionable_not_urgent")], [("P1", "actionable_not_urgent")], [("R1", "P1")])
        )
    return json.dumps(evaluation([("R1", "actionable_not_urgent")], [], missing=["R1"]))


def test_the_metric_scores_through_an_endpoint_and_counts_what_it_cannot_read(tmp_path):
    pytest.importorskip("openai", reason="the judge is served over HTTP: the llm extra's openai client")
    endpoint = tmp_path / "judge.yaml"
    with FaultServer(responder=scripted_judge) as server:
        endpoint.write_text(f"model: judge\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        result = Scorer(["crimson"], endpoint=str(endpoint), llm_cache=tmp_path / "cache.sqlite", n_bootstrap=0)(
            ["Small left pleural effusion."] * 3,
            ["Small left pleural effusion.", "No acute disease.", "Garbled"],
        )
        bodies = list(server.bodies)
    rows = result.per_sample
    assert [r["crimson"] for r in rows] == [1.0, 0.0, None]
    assert rows[1]["crimson_missing_findings"] == 1 and rows[1]["crimson_weighted_missing_findings"] == 0.5
    assert result.summary["crimson"]["not_scored"] == 1 and "error" in result.details["crimson"][2]
    assert all({k: b[k] for k in REFERENCE_REQUEST} == REFERENCE_REQUEST and "max_tokens" not in b for b in bodies)
    assert "Specific guidelines for attribute error severity" in bodies[0]["messages"][1]["content"]
    assert "guidelines:True" in result.signatures["crimson"] and "judge:judge" in result.signatures["crimson"]


def test_scripted_answers_give_the_references_scores_refusals_and_requests(tmp_path):
    """crimson-score 0.2.0, run on 34 scripted answers through its OpenAI path (tests/parity/make_crimson_fixture.py),
    and radmetrics' crimson through the same judge: the same score or the same refusal for every pair, the same
    messages and request settings for every request (parity/crimson_parity.py)."""
    pytest.importorskip("openai", reason="the judge is served over HTTP: the llm extra's openai client")
    from parity.crimson_parity import compare_endpoint

    found = compare_endpoint(tmp_path)
    assert found["mismatches"] == [] and found["requests"] == found["pairs"] == 34
    assert found["refused_by_both"] >= 5 and found["scored_by_both"] >= 25


def test_each_pairs_context_enters_its_prompt_from_python_and_from_a_csv(tmp_path, capsys):
    pytest.importorskip("openai", reason="the judge is served over HTTP: the llm extra's openai client")
    from cli_args import score_args

    from radmetrics.inference.cli import main
    from radmetrics.inference.scoring.scorer import ScoringInputError

    endpoint = tmp_path / "judge.yaml"
    answer = json.dumps(evaluation([], []))
    with FaultServer(responder=lambda messages: answer) as server:
        endpoint.write_text(f"model: judge\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        scorer = Scorer(["crimson"], endpoint=str(endpoint), llm_cache=tmp_path / "cache.sqlite", n_bootstrap=0)
        scorer(["Effusion."], ["Effusion."], context=[CONTEXT])
        with pytest.raises(ScoringInputError, match="1 contexts for 2 pairs"):
            scorer(["a", "b"], ["a", "b"], context=[CONTEXT])
        (tmp_path / "refs.csv").write_text("id,report,PatientAge,Indication\ns1,Effusion.,071Y,Dyspnea\n")
        (tmp_path / "hyps.csv").write_text("id,report\ns1,No effusion.\n")
        judge = [
            "--metrics",
            "crimson",
            "--endpoint",
            str(endpoint),
            "--context-fields",
            "PatientAge=Age",
            "Indication",
        ]
        assert main(score_args(tmp_path / "refs.csv", tmp_path / "hyps.csv", tmp_path / "out", *judge)) == 0
        prompts = [body["messages"][1]["content"] for body in server.bodies]
    assert "Patient Context:\n    Age: 82\n    Indication: Routine preoperative evaluation\n" in prompts[0]
    assert "Context guidelines:" in prompts[0]  # the guidelines keep their context section
    assert "Patient Context:\n    Age: 071Y\n    Indication: Dyspnea\n" in prompts[-1]
    capsys.readouterr()
    (tmp_path / "refs.txt").write_text("Effusion.\n")
    (tmp_path / "hyps.txt").write_text("Effusion.\n")
    args = score_args(tmp_path / "refs.txt", tmp_path / "hyps.txt", tmp_path / "out2", *judge)
    assert main(args) == 2 and "context fields need a CSV" in capsys.readouterr().err


def test_meta_eval_radpref_runs_crimson_with_radprefs_context(tmp_path):
    pytest.importorskip("openai", reason="the judge is served over HTTP: the llm extra's openai client")
    from radmetrics.inference.cli import main

    endpoint = tmp_path / "judge.yaml"
    with FaultServer(responder=scripted_judge) as server:
        endpoint.write_text(f"model: judge\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        args = ["meta-eval", "radpref", "--metrics", "crimson", "rougeL", "--endpoint", str(endpoint)]
        assert main([*args, "--bootstrap", "20", "--out", str(tmp_path / "out")]) == 0
        prompts = [body["messages"][1]["content"] for body in server.bodies]
    report = json.loads((tmp_path / "out" / "agreement.json").read_text())
    assert {"crimson", "crimson_weighted_missing_findings"} <= set(report["keys"])
    assert len(prompts) == 100 and all("Patient Context:\n    Age: " in p and "    Indication: " in p for p in prompts)


@pytest.mark.parametrize(
    "variant, n, followed",
    [
        ("no_generation_config", None, 68),
        ("gemma3_generation_config", 4, 4),
        # every pair's draws followed (tests/parity/add_crimson_answer_ids.py): about 17 minutes of CPU
        pytest.param("gemma3_generation_config", None, 68, marks=pytest.mark.slow),
    ],
)
def test_the_released_model_is_prompted_and_decoded_as_the_reference(tmp_path, variant, n, followed):
    """crimson-score 0.2.0's hf path on a look-alike of its released model (tests/parity/make_crimson_fixture.py
    --part lookalike): the same prompt token ids (chat template, system prompt, guidelines dropped, context) and the
    same generation settings, exactly; every decoding step's draw (sampled) or argmax (greedy), recomputed from the
    run's own logits, the reference's token or a near tie a float kernel can flip (parity/decoding.py); then the same
    answers and the same refusals, for every parity pair without and with a context. The greedy answers turn on no
    near tie: their smallest margin is recorded and must stay clear of the tolerance."""
    from parity.crimson_parity import compare_lookalike, fixture
    from parity.decoding import DEFAULT_ULPS

    found = compare_lookalike(variant, n, tmp_path)
    assert found["mismatches"] == [] and found["pairs"] == (n or 68)
    expected = fixture("lookalike")["variants"][variant][: found["pairs"]]
    assert found["followed"] == followed
    assert found["steps"] == sum(len(e["answer_ids"]) for e in expected if "answer_ids" in e)  # every token checked
    if variant == "no_generation_config":
        assert found["near_ties"] == [] and found["smallest_margin"] > 4 * DEFAULT_ULPS, found["smallest_margin"]
    signature = found["signature"]
    assert "generation:reference" in signature and "guidelines:False" in signature and "-bf16" in signature
    assert "request:" not in signature and "max_new_tokens:" not in signature


@pytest.mark.slow
def test_kernel_sized_noise_in_the_released_models_logits_still_decodes_as_the_reference(tmp_path):
    """Every logit of every step moved by up to one bf16 unit in the last place (the largest difference measured
    between oneDNN's AVX2, AVX-512, AVX512-BF16 and AMX kernels on this look-alike): the sampled answers still
    follow the reference's, near ties counted."""
    from parity.crimson_parity import compare_lookalike
    from parity.decoding import kernel_noise

    found = compare_lookalike("gemma3_generation_config", 2, tmp_path, perturb=kernel_noise(1.0, seed=1))
    assert found["mismatches"] == [] and found["steps"] == 512


@pytest.mark.slow
@pytest.mark.parametrize("difference", ["token", "seed", "setting"])
def test_a_real_difference_from_the_references_decoding_fails(tmp_path, monkeypatch, difference):
    """A wrong token in the reference's answer, another seed, another setting: each is a mismatch, not a near tie.
    (A mismatched step is forced to the reference's token too, so that every later step is still checked.)"""
    import torch
    from parity.crimson_parity import compare_lookalike, fixture

    from radmetrics.inference.metrics.crimson.local import ReleasedCrimson

    answers = [e["answer_ids"] for e in fixture("lookalike")["variants"]["gemma3_generation_config"][:1]]
    if difference == "token":
        answers[0][10] = answers[0][10] + 1
    elif difference == "seed":
        seed = torch.manual_seed
        monkeypatch.setattr(torch, "manual_seed", lambda value: seed(value + 1))
    else:
        kwargs = ReleasedCrimson.generation_kwargs

        def top_p_09(self):
            config = kwargs(self)["generation_config"]
            config.top_p = 0.9
            return {"generation_config": config}

        monkeypatch.setattr(ReleasedCrimson, "generation_kwargs", top_p_09)
    found = compare_lookalike("gemma3_generation_config", 1, tmp_path, answers=answers)
    decoding = [m for m in found["mismatches"] if m.startswith("answer 0: step")]  # forced on: each step is checked
    if difference == "token":
        assert decoding[0].startswith("answer 0: step 10 draws token") and decoding[0].endswith(f" {answers[0][10]}")
        assert "pair 0: the answers differ" in found["mismatches"]
    elif difference == "seed":
        assert len(decoding) >= 16 and decoding[0].startswith("answer 0: step 0 ")  # measured: 32 of 256 steps
    else:
        assert any(m.startswith("pair 0: generation settings") for m in found["mismatches"])


def test_the_released_models_catalogue_name_drops_the_guidelines_and_a_path_keeps_them():
    from radmetrics.inference.metrics.crimson.metric import resolved_guidelines

    assert resolved_guidelines(None, {"crimson": "medgemma-4b-it-crimson"}) is False
    assert resolved_guidelines(None, {"crimson": "rajpurkarlab/medgemma-4b-it-crimson"}) is False
    assert resolved_guidelines(None, {}) is True
    assert resolved_guidelines(True, {"crimson": "medgemma-4b-it-crimson"}) is True


def test_report_html_shows_each_finding_with_its_error_and_significance():
    from radmetrics.inference.files.report_html import compact_detail

    answer = json.dumps(
        evaluation(
            [("R1", "urgent"), ("R2", "actionable_not_urgent")],
            [("P1", "actionable_not_urgent"), ("P2", "benign_expected")],
            [("R2", "P1")],
            false=["P2"],
            missing=["R1"],
            attributes=[("R2", "P1", "significant")],
        )
    )
    evaluated, scored = evaluate_answer(answer)
    shown = compact_detail(
        "crimson", {"evaluation": evaluated, **{k: v for k, v in scored.items() if k != "matched_findings"}}
    )
    rows = {row[1]: row for row in shown["tables"][0]["rows"]}
    assert rows["R1"][3:] == ["urgent", "missing"] and rows["P2"][3:] == ["benign_expected", "false"]
    assert rows["R2"][4] == "location (significant)" and rows["P1"][4] == "matched"
    assert shown["notes"] == [f"CRIMSON {scored['crimson_score']}"]
