"""LLM-driven data building (error injection, GREEN teacher annotation) against a local chat-completions server."""

import json
import random
import re

import pytest
from llm_fault_server import FaultServer

from radmetrics.data_builders.corpus.corpora import load_corpus
from radmetrics.data_builders.pairs.llm_teacher import (
    error_injection_prompt,
    parse_candidate,
    sample_error_combination,
)
from radmetrics.inference.cli import main
from radmetrics.inference.metrics.green.format import CATEGORIES, parse_green_response, render_green_response

pytest.importorskip("openai")


def injector(messages: list[dict]) -> str:
    prompt = messages[0]["content"]
    report = re.search(r"[Rr]eport: \n(.*?)\n", prompt).group(1)
    return f"Here you go.\n[Candidate]: {report} Small right pleural effusion."


def green_teacher(messages: list[dict]) -> str:
    prompt = messages[0]["content"]
    reference = prompt.split("2. Reference Report:\n")[1].split("\n\n")[0]
    candidate = prompt.split("3. Candidate Report:\n")[1].split("\n\n")[0]
    missing = [s for s in reference.split(". ") if s not in candidate]
    return render_green_response(
        "Compared sentence by sentence.", {"b": missing}, {}, [s for s in reference.split(". ") if s in candidate]
    )


def write_endpoint(path, server) -> str:
    path.write_text(
        f"model: teacher\nname: test-teacher\nbase_url: {server.url}\napi_key_env: null\nmax_in_flight: 8\n"
        "timeout_s: 5\nbackoff_base_s: 0.01\nbackoff_max_s: 0.05\n"
    )
    return str(path)


def test_error_injection_prompt_follows_appendix_a4():
    prompt = error_injection_prompt("No effusion.", ["a", "c"], subtle=True)
    assert f"Introduce errors related to {CATEGORIES['a']}, {CATEGORIES['c']}." in prompt
    assert "Aim for subtlety, adjusting only one word where feasible." in prompt and "No effusion." in prompt
    rephrase = error_injection_prompt("No effusion.", [], subtle=True)
    assert "same clinical meaning but is slightly rephrased" in rephrase and "subtlety" not in rephrase
    combos = [sample_error_combination(random.Random(i)) for i in range(400)]
    assert 0.15 < sum(not c for c in combos) / 400 < 0.35 and max(len(c) for c in combos) == 3
    assert parse_candidate("[Candidate]: Heart is enlarged.") == "Heart is enlarged."
    with pytest.raises(ValueError):
        parse_candidate("I cannot do that.")


def test_inject_errors_records_requested_categories(tmp_path):
    with FaultServer(fault_rate=0.2, seed=5, responder=injector) as server:
        assert (
            main(
                [
                    "data",
                    "inject-errors",
                    "--endpoint",
                    write_endpoint(tmp_path / "e.yaml", server),
                    "--limit",
                    "40",
                    "--out",
                    str(tmp_path / "inj"),
                ]
            )
            == 0
        )
    records = [
        json.loads(line)
        for f in (tmp_path / "inj").glob("*.jsonl")
        if f.name != "failures.jsonl"
        for line in f.read_text().splitlines()
    ]
    assert len(records) == 40 and not (tmp_path / "inj" / "failures.jsonl").read_text()
    reports = {r.id: r.text for r in load_corpus("iu_xray")}
    for r in records:
        assert r["heuristic"] == "llm_error_injection" and r["candidate"].endswith("Small right pleural effusion.")
        assert r["reference"] == reports[r["reference_id"]]
        kinds = {e["kind"] for e in r["edits"]}
        assert kinds in ({"llm_rephrase"}, {"llm_requested_error"}, {"llm_requested_error_subtle"})
        if kinds != {"llm_rephrase"}:
            assert all(e["category"] in "abcdef" and e["significant"] is None for e in r["edits"])
    manifest = json.loads((tmp_path / "inj" / "llm_manifest.json").read_text())
    assert manifest["totals"]["answered"] == 40


def test_teacher_annotation_is_validated_and_resumable(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"p{i}",
                    "reference": f"Heart normal. Finding {i} seen",
                    "candidate": "Heart normal.",
                    "split": ("test", "validation", "train", "train")[i % 4],
                    "edits": [],
                }
            )
            + "\n"
            for i in range(20)
        )
    )
    with FaultServer(
        fault_rate=0.3, seed=6, faults=("invalid_answer", "rate_limit"), responder=green_teacher
    ) as server:
        args = [
            "data",
            "annotate",
            "--pairs",
            str(pairs),
            "--endpoint",
            write_endpoint(tmp_path / "e.yaml", server),
            "--out",
            str(tmp_path / "teacher"),
        ]
        assert main([*args, "--limit", "10"]) == 0  # an interrupted run: half the pairs
        assert main(args) == 0
        # the resumed run re-sent nothing validly answered; a refused answer is asked again, not replayed
        assert all(n == 1 or server.planned[key] == "invalid_answer" for key, n in server.answered.items())
    records = [
        json.loads(line)
        for split in ("train", "validation", "test")
        for line in (tmp_path / "teacher" / f"{split}.jsonl").read_text().splitlines()
    ]
    assert len(records) == 20 and {r["teacher"] for r in records} == {"test-teacher"}
    for r in records:
        parsed = parse_green_response(r["response"])
        assert parsed.parsed and parsed.significant[1] == 1 and parsed.matched == 1
