"""Baselines beside the scores: the same metrics on the user's references with another patient's report and a normal
template, equal to scoring those candidates by hand, and said in words."""

import json

import pytest
from cli_args import score_in

from radmetrics.inference.scoring.baselines import (
    DEFAULT_TEMPLATE,
    SHUFFLED,
    TEMPLATE,
    BaselineError,
    derangement,
    score_baselines,
)
from radmetrics.inference.scoring.scorer import Scorer

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)

REFS = [
    "No acute cardiopulmonary process.",
    "Mild cardiomegaly. No effusion.",
    "No acute cardiopulmonary process.",
    "Small left pleural effusion.",
    "Right lower lobe pneumonia.",
    "Lungs are clear. Heart size is normal.",
]
HYPS = [
    "No acute disease.",
    "Cardiomegaly.",
    "Normal chest.",
    "Left effusion.",
    "Pneumonia on the right.",
    "Clear lungs.",
]


def test_the_derangement_never_pairs_a_report_with_itself_or_its_twin():
    order = derangement(REFS, seed=3)
    assert sorted(order) == list(range(len(REFS))) and order == derangement(REFS, seed=3)
    assert all(REFS[j] != REFS[i] for i, j in enumerate(order))
    with pytest.raises(BaselineError):
        derangement(["Normal."] * 4)


def test_baselines_equal_scoring_the_candidates_by_hand():
    scorer = Scorer(["rougeL", "bleu4"], n_bootstrap=50)
    system = scorer(REFS, HYPS)
    baselines = score_baselines(scorer, REFS, system, seed=1)
    shuffled = [REFS[j] for j in derangement(REFS, seed=1)]
    by_hand = {SHUFFLED: scorer(REFS, shuffled), TEMPLATE: scorer(REFS, [DEFAULT_TEMPLATE] * len(REFS))}
    for name, result in by_hand.items():
        for key in ("rougeL", "bleu4"):
            assert baselines[name][key]["value"] == pytest.approx(result.summary[key]["value"])
            difference = baselines[name][key]["system_minus_baseline"]["difference"]
            assert difference == pytest.approx(system.summary[key]["value"] - result.summary[key]["value"])


def test_score_baselines_writes_the_table_the_json_and_the_page(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(REFS) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(HYPS) + "\n")
    assert (
        score_in(
            tmp_path,
            "--metrics",
            "rougeL",
            "--baselines",
            "--baseline-template",
            "Normal chest.",
            "--bootstrap",
            "50",
            out="o",
        )
        == 0
    )
    baselines = json.loads((tmp_path / "o" / "baselines.json").read_text())
    assert baselines[TEMPLATE]["candidate"] == "Normal chest." and set(baselines) == {SHUFFLED, TEMPLATE}
    assert "## Baselines on the same references" in (tmp_path / "o" / "summary.md").read_text()
    page = (tmp_path / "o" / "report.html").read_text()
    assert page.index("<h2>Baselines</h2>") < page.index("<h2>Pairs</h2>")


def rexrank_references(split: str) -> list[str]:
    from importlib.resources import files

    path = files("radmetrics.inference").joinpath("resources", "rexrank", f"rexrank_iu_xray_{split}.json")
    return [study["report"] for study in json.loads(path.read_text()).values()]


def test_rexrank_rows_only_for_a_whole_split_and_a_comparable_configuration():
    from radmetrics.inference.scoring.baselines import rexrank_rows, rexrank_split

    test = rexrank_references("test")
    assert rexrank_split(test) == "test" and rexrank_split(test[:-1]) is None
    assert rexrank_split(rexrank_references("valid")) == "valid"
    assert rexrank_split([*test[:-1], "Something else entirely."]) is None
    rexrank_setting = {"bertscore": {"model": "distilroberta-base", "idf": True}}
    published = rexrank_rows(Scorer(["bleu2", "bertscore"], metric_options=rexrank_setting), test)
    assert published["split"] == "test" and published["comparable_keys"] == {"bleu2": "BLEU", "bertscore": "BertScore"}
    assert len(published["rows"]) == 10 and published["rows"][0]["values"] == {"bleu2": 0.102, "bertscore": 0.38}
    assert rexrank_rows(Scorer(["bertscore"]), test) is None  # the bundled MiniLM is not ReXrank's BERTScore
    other_layer = {"bertscore": {**rexrank_setting["bertscore"], "num_layers": 3}}
    assert rexrank_rows(Scorer(["bertscore"], metric_options=other_layer), test) is None
    assert rexrank_rows(Scorer(["bleu2"]), test[:100]) is None


def test_published_rows_appear_beside_comparable_keys(tmp_path):
    refs = rexrank_references("valid")
    (tmp_path / "refs.jsonl").write_text("\n".join(json.dumps({"report": r}) for r in refs) + "\n")
    (tmp_path / "hyps.jsonl").write_text("\n".join(json.dumps({"report": "No acute disease."}) for _ in refs) + "\n")
    assert (
        score_in(
            tmp_path,
            *"--metrics bleu2 rougeL --baselines --bootstrap 20".split(),
            refs="refs.jsonl",
            hyps="hyps.jsonl",
            out="o",
        )
        == 0
    )
    summary = (tmp_path / "o" / "summary.md").read_text().split("## Baselines")[1]
    assert "ReXrank IU X-ray valid (published)" in summary
    bleu_row = next(line for line in summary.splitlines() if line.startswith("| bleu2 |"))
    rouge_row = next(line for line in summary.splitlines() if line.startswith("| rougeL |"))
    assert "0.042 to 0.232 (10 systems)" in bleu_row and "systems" not in rouge_row
