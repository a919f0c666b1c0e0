"""A user's own pairs through the GREEN and CRIMSON data path: a MIMIC-style CSV of pairs -> `radmetrics data
annotate` -> green/sft and crimson/sft (tiny) -> export -> score; records that do not fit a recipe or its prompt are
refused in one line before training, by `radmetrics train` and by `radmetrics rehearse`."""

import csv
import json

import pytest

from radmetrics.inference.cli import main

GREEN_TINY = (
    "--config configs/green/sft/tiny.yaml --model_name_or_path tiny-llama --max_train_samples 16 --max_eval_samples 4 "
    "--generation_eval_samples 0 --final_eval_samples 2 --final_eval_splits test --max_new_tokens 8 --max_steps 2 "
    "--eval_strategy no --save_strategy steps --save_steps 2 --report_to none"
).split()


def write_user_pairs(path, iu_reports, n=40):
    """MIMIC-style pairs: study_id, the reference's findings and impression columns, a generated report (the next
    report's findings: a wrong report, or the reference's findings alone: a missing impression)."""
    reports = [r for r in iu_reports if r.findings.strip() and r.impression.strip()][:n]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["study_id", "findings", "impression", "generated"])
        for i, report in enumerate(reports):
            generated = reports[(i + 1) % n].findings if i % 2 else report.findings
            writer.writerow([f"s{i}", report.findings, report.impression, generated])
    return path


def annotate(tmp_path, pairs, out, *options) -> int:
    fields = ["--reference-field", "findings+impression", "--candidate-field", "generated"]
    return main(["data", "annotate", "--pairs", str(pairs), *fields, *options, "--out", str(tmp_path / out)])


def write_records(folder, records_by_split):
    folder.mkdir(parents=True, exist_ok=True)
    for split, records in records_by_split.items():
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def green_record(units="statements", **extra):
    from radmetrics.inference.metrics.green.format import render_green_response

    response = render_green_response("One finding missed.", {"b": ["B."]}, {}, ["A."])
    return {"reference": "A. B.", "candidate": "A.", "response": response, "teacher_units": units, **extra}


def crimson_record():
    from radmetrics.data_builders.pairs.crimson_programmatic import programmatic_answer

    pair = {"reference": "Small left pleural effusion.", "candidate": "No acute disease."}
    return {**pair, "response": programmatic_answer(pair)}


def train(recipe, *args) -> int:
    return main(["train", recipe, *args])


def test_records_that_do_not_fit_the_recipe_are_refused_in_one_line(tmp_path, capsys):
    splits = ("train", "validation", "test")
    findings = write_records(tmp_path / "findings", {s: [green_record("findings")] for s in splits})
    out = ["--output_dir", str(tmp_path / "run")]
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(findings), *out) == 2
    [error] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("radmetrics train: error:")]
    assert "pass --prompt findings" in error and "teacher_units findings" in error
    statements = write_records(tmp_path / "statements", {s: [green_record()] for s in splits})
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(statements), "--prompt", "findings", *out) == 2
    assert "annotate with `radmetrics data annotate --units findings`" in capsys.readouterr().err
    crimson = write_records(tmp_path / "crimson", {s: [crimson_record()] for s in splits})
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(crimson), *out) == 2
    assert "holds a CRIMSON answer, not a GREEN response: train crimson/sft" in capsys.readouterr().err
    assert train("crimson/sft", "--config", "configs/crimson/sft/tiny.yaml", "--annotations_dir", str(statements)) == 2
    assert "holds a GREEN response, not a CRIMSON answer: train green/sft" in capsys.readouterr().err
    empty = write_records(tmp_path / "empty", {"train": [green_record()], "validation": [], "test": [green_record()]})
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(empty), *out) == 2
    assert "validation.jsonl holds no records" in capsys.readouterr().err
    unsplit = write_records(tmp_path / "unsplit", {"annotations": [green_record()]})
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(unsplit), *out) == 2
    assert "annotate again without --split-by none" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before the run started


def test_data_annotate_reads_a_csv_and_writes_the_splits_green_sft_takes(tmp_path, iu_reports, capsys):
    pairs = write_user_pairs(tmp_path / "pairs.csv", iu_reports)
    assert annotate(tmp_path, pairs, "annotations") == 0
    written = {
        s: (tmp_path / "annotations" / f"{s}.jsonl").read_text().splitlines() for s in ("train", "validation", "test")
    }
    assert all(written.values()) and sum(map(len, written.values())) == 40
    record = json.loads(written["train"][0])
    assert record["study_id"].startswith("s") and "\n" in record["reference"]  # findings, then impression
    assert record["teacher_units"] == "findings"
    stats = json.loads((tmp_path / "annotations" / "stats.json").read_text())
    assert stats["split_by"] == "reference" and stats["written"] == 40
    # the default prompt does not show the findings these records were judged on: refused before the first step
    out = ["--output_dir", str(tmp_path / "run")]
    assert train("green/sft", *GREEN_TINY, "--pairs_dir", str(tmp_path / "annotations"), *out) == 2
    assert "pass --prompt findings" in capsys.readouterr().err
    # and by the rehearsal of the GPU config, before anything is built or launched
    from radmetrics.training.rehearsal import REPO, RehearsalError, rehearse

    config = REPO / "configs" / "green" / "sft" / "llama-2-7b-lora.yaml"
    wrong = ["--pairs_dir", str(tmp_path / "annotations"), "--prompt", "green"]
    with pytest.raises(RehearsalError, match=r"llama-2-7b-lora.yaml with your data: .* pass --prompt findings"):
        rehearse(config, tmp_path / "rehearsal", user_overrides=wrong)
    with pytest.raises(RehearsalError, match="--promt is not an option of green/sft"):
        rehearse(config, tmp_path / "rehearsal", user_overrides=["--promt", "findings"])
    assert not (tmp_path / "rehearsal").exists()
    assert main(["rehearse", str(config), "--", *wrong]) == 1
    assert "FAILED: llama-2-7b-lora.yaml with your data" in capsys.readouterr().out


@pytest.mark.slow
def test_user_pairs_annotate_train_export_and_score_green(tmp_path, iu_reports):
    """The CSV -> data annotate (semantic teacher over findings) -> green/sft tiny with --prompt findings -> export ->
    radmetrics score --metrics green with the export."""
    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.export import export_run

    pairs = write_user_pairs(tmp_path / "pairs.csv", iu_reports)
    assert annotate(tmp_path, pairs, "annotations") == 0
    pairs_dir = str(tmp_path / "annotations")
    run = tmp_path / "run"
    assert (
        train("green/sft", *GREEN_TINY, "--pairs_dir", pairs_dir, "--prompt", "findings", "--output_dir", str(run))
        == 0
    )
    assert read_eval_results(run)["test_green_eval_pairs"] == 2
    export = export_run(run, tmp_path / "export")
    (tmp_path / "refs.txt").write_text("Large right pneumothorax. Heart size is normal.\n")
    (tmp_path / "hyps.txt").write_text("Heart size is normal.\n")
    score = ["score", "--refs", str(tmp_path / "refs.txt"), "--hyps", str(tmp_path / "hyps.txt"), "--metrics", "green"]
    options = [
        "--components",
        f"green={export}",
        "--option",
        "green.max_new_tokens=8",
        "--option",
        "green.summary=false",
    ]
    assert main([*score, *options, "--bootstrap", "0", "--out", str(tmp_path / "scores")]) == 0
    summary = json.loads((tmp_path / "scores" / "summary.json").read_text())
    assert summary["green"]["n"] + summary["green"]["not_scored"] == 1


@pytest.mark.slow
def test_user_pairs_annotate_train_export_and_score_crimson(tmp_path, iu_reports):
    """The CSV -> data annotate --format crimson (an LLM teacher: a scripted OpenAI-compatible server) -> crimson/sft
    tiny -> export -> radmetrics score --metrics crimson with the export."""
    from llm_fault_server import FaultServer
    from test_crimson_sft import score_with_export, scripted_teacher

    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.export import export_run

    pairs = write_user_pairs(tmp_path / "pairs.csv", iu_reports)
    endpoint = tmp_path / "teacher.yaml"
    with FaultServer(responder=scripted_teacher) as server:
        endpoint.write_text(f"model: teacher\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        assert annotate(tmp_path, pairs, "crimson", "--format", "crimson", "--endpoint", str(endpoint)) == 0
    run = tmp_path / "run"
    args = "--config configs/crimson/sft/tiny.yaml --max_steps 2 --final_eval_samples 2 --max_new_tokens 16"
    args += f" --annotations_dir {tmp_path / 'crimson'} --output_dir {run}"
    assert train("crimson/sft", *args.split()) == 0
    assert read_eval_results(run)["test_pairs"] == 2
    assert score_with_export(tmp_path, export_run(run, tmp_path / "export")) == 0


@pytest.mark.slow
def test_rehearse_runs_the_gpu_config_on_the_users_pairs_to_the_end(tmp_path, iu_reports):
    """`radmetrics rehearse CONFIG -- --pairs_dir DIR --prompt findings`: the user's annotations, checked, then the
    look-alike trained on a few of them through the launcher (signal, requeue, resume), evaluated, exported."""
    from radmetrics.training.rehearsal import REPO, rehearse

    pairs = write_user_pairs(tmp_path / "pairs.csv", iu_reports)
    assert annotate(tmp_path, pairs, "annotations") == 0
    user = ["--pairs_dir", str(tmp_path / "annotations"), "--prompt", "findings"]
    result = rehearse(REPO / "configs/green/sft/llama-2-7b-lora.yaml", tmp_path / "rehearsal", user_overrides=user)
    assert result.resumed_from == result.saved_on_signal and result.reloaded_as
    run = tmp_path / "rehearsal" / "green_sft" / "llama-2-7b-lora" / "run"
    manifest = json.loads((run / "radmetrics_run.json").read_text())
    assert manifest["data_provenance"]["pairs_dir"] == str(tmp_path / "annotations")
    assert manifest["training_config"]["prompt"] == "findings"
    assert result.eval_results["test_green_eval_pairs"] >= 1
