"""FineRadScore and RadFact: parsing and scoring rules, and end to end through `radmetrics score` against a
chat-completions server on 127.0.0.1 whose stand-in judge answers by simple sentence matching."""

import json
import math
import re

import pytest
from cli_args import score_args, score_in
from llm_fault_server import FaultServer

from radmetrics.inference import box_precision, fineradscore_aggregate, number_lines
from radmetrics.inference.cli import main
from radmetrics.inference.metrics.fineradscore.judge import apply_corrections, parse_corrections
from radmetrics.inference.metrics.radfact.judge import NLI_INSTRUCTIONS, PHRASES_INSTRUCTIONS, parse_entailment
from radmetrics.inference.text.sentences import split_fineradscore, split_sentences

pytest.importorskip("openai")


def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


def fineradscore_judge(messages: list[dict]) -> str:
    """Deletes candidate lines absent from the ground truth (urgent), inserts missing ground-truth sentences."""
    assert messages[0]["role"] == "system" and len(messages) in (12, 14)  # the authors' GPT-4 layout (+ a re-prompt)
    numbered, truth = messages[11]["content"].removeprefix("Generated Text: ").split(" \n \n Ground Truth Text: ")
    lines = re.findall(r"\[(\d+)\] (.*?)(?= \[\d+\] |$)", numbered)
    truth_sentences = split_fineradscore(truth)
    entries = [
        f'"{i}": {{"corrections": "[delete]", "clinical severity": "Urgent error", "comments": "not in the reference",'
        ' "error category": ["False prediction of finding"]}'
        for i, line in lines
        if norm(line) not in {norm(t) for t in truth_sentences}
    ]
    omission = {
        "clinical severity": "Not actionable",
        "comments": "omitted",
        "error category": ["Omission of finding"],
    }
    entries += [
        f'"None": {json.dumps({"corrections": t, **omission})}'
        for t in truth_sentences
        if norm(t) not in {norm(line) for _, line in lines}
    ]
    return "```json\n{" + ", ".join(entries) + "}\n```"


def radfact_judge(messages: list[dict]) -> str:
    """Report-to-phrases: one phrase per sentence. Entailment: the hypothesis is entailed when a reference phrase
    says the same words."""
    query = messages[-1]["content"]
    if messages[0]["content"] == PHRASES_INSTRUCTIONS:
        return json.dumps({"phrases": split_sentences(query)})
    assert messages[0]["content"] == NLI_INSTRUCTIONS
    q = json.loads(query)
    evidence = [p for p in q["reference"] if norm(p) == norm(q["hypothesis"])]
    return json.dumps({"status": "entailment" if evidence else "not_entailment", "evidence": evidence})


def write_endpoint(path, server) -> str:
    path.write_text(
        f"model: judge\nbase_url: {server.url}\napi_key_env: null\nmax_in_flight: 8\ntimeout_s: 5\n"
        "backoff_base_s: 0.01\nbackoff_max_s: 0.05\ngeneration: {temperature: 0, max_tokens: 512}\n"
    )
    return str(path)


def test_number_lines_follows_the_authors_code():
    # rajpurkarlab/FineRadScore run_rexval_experiments.py: periods kept, quotes dropped, lines joined by spaces
    assert (
        number_lines("Heart size is normal. Effusion measures 2.5 cm. No pneumothorax.")
        == "[0] Heart size is normal. [1] Effusion measures 2.5 cm. [2] No pneumothorax."
    )
    assert (
        number_lines('Lungs "clear". Is there effusion? No. Heart normal')
        == "[0] Lungs clear. [1] Is there effusion? No. [2] Heart normal."
    )
    assert number_lines("A. . B. . C.") == "[0] A. [1] B. [2] . [3] C."  # only the first empty piece is dropped
    assert number_lines("") == ""


def test_corrections_are_validated_scored_and_applied():
    answer = (
        '{"1": {"corrections": "[delete]", "clinical severity": "Urgent error", "comments": "x", '
        '"error category": ["False prediction of finding"]}, '
        '"None": {"corrections": "Small left effusion.", "clinical severity": "Invalid comparison", "comments": "", '
        '"error category": []}, '
        '"None": {"corrections": "Mild edema.", "clinical severity": "emergent error", "comments": "", '
        '"error category": ["Omission of finding"]}}'
    )
    corrections = parse_corrections(answer, n_lines=2)
    assert [c.line for c in corrections] == [1, None, None]  # both "None" insertions kept
    assert fineradscore_aggregate(corrections) == (3 + 1 + 4, 4)
    assert fineradscore_aggregate({}) == (0, 0)
    assert (
        apply_corrections("Heart size is normal. Cardiomegaly.", corrections)
        == "Heart size is normal. Small left effusion. Mild edema."
    )
    for bad, reason in [
        ("no json", "no JSON object"),
        ('{"7": {}}', "line id"),
        ('{"0": {"corrections": "x", "clinical severity": "severe"}}', "clinical severity"),
        ('{"None": {"corrections": "[delete]", "clinical severity": "Urgent error"}}', "cannot be"),
        (
            '{"0": {"corrections": "x", "clinical severity": "Urgent error", "error category": ["Wrong"]}}',
            "error category",
        ),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_corrections(bad, n_lines=2)


def test_box_precision_uses_the_224_grid_and_strict_half():
    assert box_precision([(0, 0, 0.5, 0.5)], [(0, 0, 0.25, 0.5)]) == 0.5  # 56x112 of 112x112 pixels
    assert box_precision([(0, 0, 0.5, 0.5)], [(0, 0, 0.25, 0.5), (0.25, 0, 0.5, 0.1)]) == pytest.approx(
        (56 * 112 + 56 * 22) / 112**2
    )
    assert box_precision([(0.1, 0.1, 0.2, 0.2)], [(0, 0, 1, 1)]) == 1.0
    assert box_precision([(0.1, 0.1, 0.2, 0.2)], []) == 0.0
    # 0.004 * 224 = 0.896 truncates to pixel 0: the box is empty on the grid
    assert math.isnan(box_precision([(0.0, 0.0, 0.004, 0.004)], [(0, 0, 1, 1)]))


def test_entailment_evidence_must_quote_the_reference():
    assert parse_entailment(
        '{"status": "entailment", "evidence": ["No  effusion."]}', ["Heart normal.", "No effusion."]
    ) == (True, [1])
    assert parse_entailment('{"status": "not_entailment", "evidence": []}', ["x"]) == (False, [])
    with pytest.raises(ValueError, match="not among"):
        parse_entailment('{"status": "entailment", "evidence": ["Made up."]}', ["x"])
    with pytest.raises(ValueError, match="status"):
        parse_entailment('{"status": "neutral"}', ["x"])


PAIRS = [
    ("Heart size is normal. No pleural effusion.", "Heart size is normal. No pleural effusion."),
    ("Heart size is normal. No pleural effusion.", "Heart size is normal. Cardiomegaly."),
    ("Lungs are clear. No pneumothorax.", "Lungs are clear. No pneumothorax. Small left effusion."),
]


def write_pairs(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(r for r, _ in PAIRS) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(c for _, c in PAIRS) + "\n")


def read_rows(out):
    return [json.loads(line) for line in (out / "per_sample.jsonl").read_text().splitlines()]


def test_fineradscore_through_radmetrics_score_with_reprompts_and_cache(tmp_path):
    write_pairs(tmp_path)
    with FaultServer(
        fault_rate=0.5, seed=3, faults=("invalid_answer", "server_error"), responder=fineradscore_judge
    ) as server:
        judge = ["--metrics", "fineradscore", "--endpoint", write_endpoint(tmp_path / "judge.yaml", server)]
        args = score_args(str(tmp_path / "refs.txt"), str(tmp_path / "hyps.txt"), str(tmp_path / "out"), *judge)
        args += ["--bootstrap", "50"]
        assert main(args) == 0
        first = json.loads((tmp_path / "out" / "run.json").read_text())["meta"]["fineradscore"]["llm"]["totals"]
        sent, invalid = server.requests, server.injected["invalid_answer"]
        assert main([*args, "--overwrite"]) == 0  # rerun: valid answers come from the cache; refused ones asked again
        assert server.requests == sent + invalid
    out = tmp_path / "out"
    rows = read_rows(out)
    assert [(r["fineradscore_sum"], r["fineradscore_max"]) for r in rows] == [(0, 0), (3 + 1, 3), (3, 3)]
    details = [json.loads(line) for line in (out / "details" / "fineradscore.jsonl").read_text().splitlines()]
    assert details[1]["corrected_report"] == "Heart size is normal. No pleural effusion."
    assert details[1]["corrections"][0]["comments"] == "not in the reference"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["fineradscore_sum"]["value"] == pytest.approx(7 / 3) and summary["fineradscore_sum"]["n"] == 3
    assert first["answered"] == 3 and first["failed"] == 0 and first["reprompts"] == invalid >= 1
    totals = json.loads((out / "run.json").read_text())["meta"]["fineradscore"]["llm"]["totals"]
    assert totals["answered"] == 3 and totals["cache_hits"] == 3 - invalid and totals["reprompts"] == 0


def test_fineradscore_answer_that_never_validates_is_not_scored(tmp_path):
    write_pairs(tmp_path)
    with FaultServer(responder=lambda messages: "I think the report is fine.") as server:
        judge = ["--metrics", "fineradscore", "--endpoint", write_endpoint(tmp_path / "judge.yaml", server)]
        args = score_args(str(tmp_path / "refs.txt"), str(tmp_path / "hyps.txt"), str(tmp_path / "out"), *judge)
        args += ["--bootstrap", "10"]
        assert main(args) == 0
        assert server.requests == 3 * 6  # the question and 5 re-prompts per pair
    rows = read_rows(tmp_path / "out")
    assert all(r["fineradscore_sum"] is None for r in rows)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    warning = summary["fineradscore_sum"].pop("warning")
    assert summary["fineradscore_sum"].pop("signature").startswith("fineradscore_sum|")
    assert summary["fineradscore_sum"] == {
        "value": None,
        "higher_is_better": False,
        "ci95": [None, None],
        "n": 0,
        "not_scored": 3,
        "empty_candidates": 0,
    }
    assert warning.startswith(
        "fineradscore: fineradscore_sum could not score 3 of 3 pairs; commonest error (3x): invalid answer"
    )
    details = (tmp_path / "out" / "details" / "fineradscore.jsonl").read_text()
    assert "invalid answer after 5 re-prompts" in details


def test_radfact_narrative_through_radmetrics_score(tmp_path):
    write_pairs(tmp_path)
    with FaultServer(fault_rate=0.2, seed=4, responder=radfact_judge) as server:
        assert (
            score_in(
                tmp_path,
                "--metrics",
                "radfact",
                "--endpoint",
                write_endpoint(tmp_path / "judge.yaml", server),
                "--bootstrap",
                "50",
            )
            == 0
        )
    rows = read_rows(tmp_path / "out")
    assert [(r["radfact_logical_precision"], r["radfact_logical_recall"]) for r in rows] == [
        (1.0, 1.0),
        (0.5, 0.5),
        (2 / 3, 1.0),
    ]
    assert all(r["radfact_spatial_precision"] is None for r in rows)  # no boxes: not scored
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    p, r = (1 + 0.5 + 2 / 3) / 3, (1 + 0.5 + 1) / 3
    assert summary["radfact_logical_f1"]["value"] == pytest.approx(2 * p * r / (p + r))  # F1 of the means
    assert summary["radfact_grounding_f1"]["value"] is None


def test_radfact_grounded_reports_spatial_entailment(tmp_path):
    left, right = (
        {"x_min": 0.0, "y_min": 0.0, "x_max": 0.5, "y_max": 0.5},
        {
            "x_min": 0.5,
            "y_min": 0.5,
            "x_max": 1.0,
            "y_max": 1.0,
        },
    )
    reference = [{"text": "Left opacity.", "boxes": [left]}, {"text": "Heart normal.", "boxes": None}]
    candidate = [{"text": "Left opacity.", "boxes": [right]}, {"text": "Heart normal.", "boxes": None}]
    (tmp_path / "pairs.jsonl").write_text(
        json.dumps({"id": "s1", "target": reference, "prediction": candidate})
        + "\n"
        + json.dumps({"id": "s2", "target": reference, "prediction": reference})
        + "\n"
    )
    with FaultServer(responder=radfact_judge) as server:
        assert (
            main(
                [
                    "score",
                    "--refs",
                    str(tmp_path / "pairs.jsonl"),
                    "--ref-field",
                    "target",
                    "--hyps",
                    str(tmp_path / "pairs.jsonl"),
                    "--hyp-field",
                    "prediction",
                    "--metrics",
                    "radfact",
                    "--endpoint",
                    write_endpoint(tmp_path / "judge.yaml", server),
                    "--bootstrap",
                    "10",
                    "--out",
                    str(tmp_path / "out"),
                ]
            )
            == 0
        )
    rows = read_rows(tmp_path / "out")
    assert [r["id"] for r in rows] == ["s1", "s2"]
    assert rows[0]["radfact_logical_precision"] == 1.0 and rows[0]["radfact_grounding_precision"] == 0.0
    assert rows[0]["radfact_spatial_recall"] == 0.0 and rows[1]["radfact_spatial_precision"] == 1.0


def test_llm_metrics_need_an_endpoint(tmp_path):
    from radmetrics.inference.scoring.scorer import MissingComponentError, Scorer

    with pytest.raises(MissingComponentError, match="judged by an LLM"):
        Scorer(["fineradscore"])


def test_demo_llm_stages_run_with_an_endpoint_and_are_skipped_without(tmp_path, capsys, monkeypatch):
    import argparse

    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.training import demo

    reports = iu_xray_corpus()[:300]
    for report, split in zip(reports, assign_splits(reports).values()):
        report.split = split

    def judge(messages):
        first = messages[0]["content"]
        if first in (PHRASES_INSTRUCTIONS, NLI_INSTRUCTIONS):
            return radfact_judge(messages)
        if first.startswith("Objective: Evaluate the accuracy"):
            return (
                "[Explanation]:\nok\n\n[Clinically Significant Errors]:\nNo errors.\n\n[Clinically Insignificant"
                " Errors]:\nNo errors.\n\n[Matched Findings]:\n1. x."
            )
        return fineradscore_judge(messages)

    state = {"reports": reports, "pairs": build_pairs(reports, assign_splits(reports), ("remove_shuffle",), 20)}
    with FaultServer(responder=judge) as server:
        state["endpoint"] = write_endpoint(tmp_path / "judge.yaml", server)
        assert demo.stage_llm_teacher(tmp_path, state) == "20 GREEN annotations by judge, 0 failed"
        assert demo.stage_llm_judges(tmp_path, state).startswith(
            "10 pairs; LLM items failed: {'fineradscore': 0, 'radfact': 0}"
        )
    assert (tmp_path / "scores_llm" / "details" / "fineradscore.jsonl").is_file()
    monkeypatch.setattr(
        demo, "stages", lambda: [demo.Stage("score: LLM judges", demo.stage_llm_judges, needs_endpoint=True)]
    )
    assert demo.run(argparse.Namespace(out=str(tmp_path / "demo"), endpoint=None)) == 0
    assert "| score: LLM judges | skipped | no LLM endpoint configured" in capsys.readouterr().out
    (tmp_path / "demo" / "leftover").write_text("x")
    assert demo.run(argparse.Namespace(out=str(tmp_path / "demo"), endpoint=None)) == 2  # never half-overwrites a demo
    assert "exists and is not empty" in capsys.readouterr().err
