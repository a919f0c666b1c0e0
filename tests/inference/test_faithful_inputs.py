"""Faithful on real inputs: report files read as written, every output scored (empty candidates too), paired
comparisons kept paired, strict JSON out, a failing metric that says so, and rewards an unscorable completion cannot
game. Each case failed on e5b1239."""

import json
import math

import pytest
from cli_args import compare_in, score_in
from llm_fault_server import FaultServer

from radmetrics.inference.files.report_io import ReportFileError, pair_reports, read_reports
from radmetrics.inference.scoring.rewards import MetricReward
from radmetrics.inference.scoring.scorer import Scorer, ScoringInputError

MULTI_LINE = "FINDINGS: Heart size is normal.\nIMPRESSION: No acute disease."


def strict_json(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_csv_fields_keep_their_line_breaks(tmp_path, newline):
    body = 'id,report\n1,"FINDINGS: Heart size is normal.\nIMPRESSION: No acute disease."\n2,Lungs are clear.\n'
    (tmp_path / "r.csv").write_bytes(body.replace("\n", newline).encode())
    reports, ids = read_reports(tmp_path / "r.csv")
    assert ids == ["1", "2"] and reports[1] == "Lungs are clear."
    assert reports[0] == MULTI_LINE.replace("\n", newline)  # the field as written, its line break kept


def test_jsonl_and_txt_split_on_newlines_alone(tmp_path):
    odd = "Heart normal.\u2028Lungs clear.\u0085No effusion.\x0cEnd."
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"id": "a", "report": odd}, ensure_ascii=False)
        + "\r\n"
        + json.dumps({"id": "b", "report": "x"})
        + "\n",
        encoding="utf-8",
    )
    assert read_reports(tmp_path / "r.jsonl") == ([odd, "x"], ["a", "b"])
    (tmp_path / "r.txt").write_bytes("one\x0cstill one\r\ntwo\u2028still two\n".encode())
    assert read_reports(tmp_path / "r.txt") == (["one\x0cstill one", "two\u2028still two"], None)
    (tmp_path / "mac.txt").write_bytes(b"Heart normal.\rLungs clear.\r")  # classic Mac OS line endings
    assert read_reports(tmp_path / "mac.txt") == (["Heart normal.", "Lungs clear."], None)


def test_pairing_by_id_is_linear_and_exact():
    n = 100_000
    ids = [f"study-{i}" for i in range(n)]
    references, candidates, paired_ids = pair_reports(
        [f"r{i}" for i in range(n)], ids, [f"c{i}" for i in reversed(range(n))], list(reversed(ids))
    )
    assert paired_ids == ids and candidates[:2] == ["c0", "c1"] and candidates[-1] == f"c{n - 1}"
    with pytest.raises(ReportFileError, match="1 id\\(s\\) of the references have no candidate \\(study-0\\)"):
        pair_reports(["r0", "r1"], ["study-0", "study-1"], ["c1", "cx"], ["study-1", "other"])


def test_empty_candidates_are_scored_and_counted_empty_references_refused(tmp_path, capsys):
    refs = ["Mild cardiomegaly.", "No pleural effusion.", "Lungs are clear."]
    result = Scorer(["bleu2", "rougeL", "bertscore"], n_bootstrap=20)(refs, ["Mild cardiomegaly.", "", "   "])
    assert [row["rougeL"] for row in result.per_sample] == [1.0, 0.0, 0.0]
    assert result.per_sample[1]["bleu2"] == 0.0 and result.per_sample[1]["bertscore"] is not None
    assert result.summary["rougeL"]["n"] == 3 and result.summary["rougeL"]["empty_candidates"] == 2
    assert "2 of the candidates are empty" in result.table()
    with pytest.raises(ScoringInputError, match="pair 1: the reference is empty"):
        Scorer(["rougeL"])(["Mild cardiomegaly.", " "], ["x", "y"])
    (tmp_path / "refs.txt").write_text("\n".join(refs) + "\n")
    (tmp_path / "hyps.txt").write_text("Mild cardiomegaly.\n\n  \n")
    assert score_in(tmp_path, "--metrics", "rougeL", "--bootstrap", "0") == 0
    summary = strict_json((tmp_path / "out" / "summary.json").read_text())  # --bootstrap 0 wrote NaN here before
    assert summary["rougeL"]["ci95"] == [None, None] and summary["rougeL"]["empty_candidates"] == 2
    assert "| rougeL | 0.3333 | n/a | 3 |" in (tmp_path / "out" / "summary.md").read_text()
    (tmp_path / "refs_gap.txt").write_text("Mild cardiomegaly.\n\nLungs are clear.\n")
    assert score_in(tmp_path, "--metrics", "rougeL", refs="refs_gap.txt", out="out2") == 2
    assert "line 2: the report is empty" in capsys.readouterr().err


def severity_judge(answers: dict[str, str]):
    """A FineRadScore stand-in judge: one correction of the severity named for the candidate's first word, or an answer
    that never validates for a candidate starting 'Garbled'."""

    def respond(messages):
        candidate = messages[11]["content"].removeprefix("Generated Text: ").split(" \n \n Ground Truth Text: ")[0]
        first = candidate.split("] ", 1)[1].split()[0]
        if first == "Garbled":
            return "I cannot say."
        correction = {
            "corrections": "[delete]",
            "clinical severity": answers[first],
            "comments": "c",
            "error category": ["False prediction of finding"],
        }
        return "```json\n" + json.dumps({"0": correction}) + "\n```"

    return respond


def endpoint_yaml(path, server) -> str:
    path.write_text(
        f"model: judge\nbase_url: {server.url}\napi_key_env: null\nmax_in_flight: 4\ntimeout_s: 5\n"
        "backoff_base_s: 0.01\nbackoff_max_s: 0.05\ngeneration: {temperature: 0, max_tokens: 256}\n"
    )
    return str(path)


JUDGE = {"Minor": "Not actionable", "Urgent": "Urgent error"}


def test_unscorable_completion_ranks_below_every_scored_one(tmp_path):
    """fineradscore_sum is lower-is-better: scored rewards are -value <= 0. Through the default path, a completion the
    judge cannot answer must not tie with a perfect report (0) nor beat any scored one."""
    pytest.importorskip("openai")
    with FaultServer(responder=severity_judge(JUDGE)) as server:
        reward = MetricReward(
            "fineradscore_sum",
            endpoint=endpoint_yaml(tmp_path / "judge.yaml", server),
            llm_cache=tmp_path / "cache.sqlite",
        )
        logged = {}
        rewards = reward(
            completions=["Urgent finding.", "Garbled text.", "Minor finding."],
            reference=["Lungs clear."] * 3,
            log_metric=lambda name, value: logged.update({name: value}),
        )
    assert rewards[0] == -3.0 and rewards[2] == -1.0
    assert rewards[1] < min(rewards[0], rewards[2]) and rewards[1] == -4.0  # the batch's worst minus the margin
    assert reward.unscorable_count == 1 and logged == {"radmetrics_fineradscore_sum/unscorable_count": 1.0}


def test_unscorable_reward_rule_in_both_directions():
    from radmetrics.inference.metrics.base import MetricOutput

    for key, values in (("rougeL", [0.2, math.nan, 0.9]), ("radcliq_v1", [1.5, math.nan, -0.5])):
        reward = MetricReward(key) if key == "rougeL" else MetricReward("rougeL", sign=-1.0)
        reward._metrics[-1].compute = lambda refs, cands, v=values: MetricOutput({"rougeL": list(v)})
        scored = reward(completions=["a", "b", "c"], reference=["x", "y", "z"])
        assert scored[1] < min(scored[0], scored[2]) and scored[1] == pytest.approx(min(scored[0], scored[2]) - 1.0)
    with pytest.raises(ValueError, match="unscorable_margin must be positive"):
        MetricReward("rougeL", unscorable_margin=0)


def test_compare_uses_the_pairs_both_systems_scored(tmp_path, capsys):
    pytest.importorskip("openai")
    (tmp_path / "refs.txt").write_text("Lungs clear.\nHeart normal.\n")
    (tmp_path / "a.txt").write_text("Minor finding.\nGarbled text.\n")
    (tmp_path / "b.txt").write_text("Minor finding.\nUrgent finding.\n")
    with FaultServer(responder=severity_judge(JUDGE)) as server:
        judge = ["--metrics", "fineradscore", "--endpoint", endpoint_yaml(tmp_path / "j.yaml", server)]
        assert compare_in(tmp_path, *judge, "--bootstrap", "50", "--permutations", "50") == 0
    key = strict_json((tmp_path / "cmp" / "compare.json").read_text())["keys"]["fineradscore_sum"]
    assert (key["a"], key["b"], key["difference"], key["n"]) == (1.0, 1.0, 0.0, 1)  # was A 1.0, B 2.0, "better: A"
    assert (key["a_not_scored"], key["b_not_scored"]) == (1, 0)
    assert "| fineradscore_sum | 1.0000 | 1.0000 | +0.0000 |" in (tmp_path / "cmp" / "compare.md").read_text()


def test_preference_leaves_unscorable_pairs_out_of_ties():
    import numpy as np

    from radmetrics.inference.scoring.stats import UNSCORABLE, preference_accuracy

    picked = np.array([1, 2, 0, UNSCORABLE])
    result = preference_accuracy(picked, np.array([1, 1, 1, 2]), "half", 10, 0)
    assert result["n"] == 3 and result["accuracy"] == pytest.approx(1.5 / 3)
    assert result["unscorable_left_out"] == 1 and result["metric_ties"] == 1


def test_a_metric_failing_on_most_pairs_warns(tmp_path, capsys):
    pytest.importorskip("openai")
    (tmp_path / "refs.txt").write_text("Lungs clear.\nHeart normal.\nNo effusion.\n")
    (tmp_path / "hyps.txt").write_text("Garbled a.\nGarbled b.\nMinor finding.\n")
    with FaultServer(responder=severity_judge(JUDGE)) as server:
        judge = ["--metrics", "fineradscore", "--endpoint", endpoint_yaml(tmp_path / "j.yaml", server)]
        assert score_in(tmp_path, *judge, "--bootstrap", "10") == 0
    err = capsys.readouterr().err
    assert (
        "warning: fineradscore: fineradscore_sum could not score 2 of 3 pairs; commonest error (2x): invalid answer"
        in err
    )
    summary = strict_json((tmp_path / "out" / "summary.json").read_text())
    assert "could not score 2 of 3" in summary["fineradscore_sum"]["warning"]
    assert "(most pairs not scored)" in (tmp_path / "out" / "summary.md").read_text()


def test_a_training_run_is_refused_as_a_component(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    (run / "radmetrics_run.json").write_text("{}")
    (run / "final" / "config.json").write_text("{}")
    (tmp_path / "r.txt").write_text("Lungs clear.\n")
    for entry in (f"green={run / 'final'}", str(run)):
        assert score_in(tmp_path, "--metrics", "green", "--components", entry, refs="r.txt", hyps="r.txt") == 2
        error = capsys.readouterr().err
        assert f"not an export; export it first: radmetrics export {run} --out" in error and error.count("\n") == 1
