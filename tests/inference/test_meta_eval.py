"""meta-eval correlate and preference with several raters, `radmetrics compare`, and refits that scoring can use."""

import csv
import json

import numpy as np
import pytest
from cli_args import compare_in

from radmetrics.inference.cli import main
from radmetrics.inference.text.sentences import split_sentences


@pytest.fixture(scope="module")
def rated(iu_reports):
    """Reference/candidate pairs whose candidate drops k of the reference's sentences; raters count k with noise."""
    rng = np.random.default_rng(0)
    rows = []
    for report in [r.text for r in iu_reports if len(split_sentences(r.text)) >= 4][:40]:
        sentences = split_sentences(report)
        dropped = int(rng.integers(0, 4))
        candidate = " ".join(sentences[dropped:])
        rows.append(
            {
                "reference": report,
                "candidate": candidate,
                "dropped": dropped,
                **{f"rater_{i}": dropped + int(rng.integers(0, 2)) for i in range(3)},
            }
        )
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return str(path)


def test_correlate_per_rater_mean_and_inter_rater(rated, tmp_path, capsys):
    data = write_csv(tmp_path / "rated.csv", rated)
    options = "--human-columns rater_0 rater_1 rater_2 --metrics bleu2,rougeL --bootstrap 100".split()
    assert main(["meta-eval", "correlate", "--csv", data, *options, "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "kendall_tau.json").read_text())
    for key in ("bleu2", "rougeL"):
        entry = report["metrics"][key]
        # oriented by the declared direction: higher ROUGE = fewer errors, so agreement is a positive tau
        assert (
            entry["higher_is_better"] and entry["mean_of_raters"]["tau_b"] > 0.3 and "tau_c" in entry["mean_of_raters"]
        )
        assert set(entry["per_rater"]) == {"rater_0", "rater_1", "rater_2"}
        # tau-b and tau-c each keep their own interval
        tau = entry["mean_of_raters"]
        assert tau["ci95"][0] <= tau["tau_b"] <= tau["ci95"][1] and tau["tau_c_ci95"][0] <= tau["tau_c"]
    assert set(report["inter_rater"]["rater_vs_mean_of_others"]) == {"rater_0", "rater_1", "rater_2"}
    assert len(report["inter_rater"]["rater_pairs"]) == 3
    printed = capsys.readouterr().out
    assert "| inter-rater: rater_0 vs the others |" in printed and (tmp_path / "out" / "scatter_rougeL.png").is_file()


def test_correlate_without_metrics_runs_what_the_components_allow(rated, tmp_path):
    data = write_csv(tmp_path / "rated.csv", rated[:12])
    options = ["--human-column", "dropped", "--bootstrap", "20"]
    assert main(["meta-eval", "correlate", "--csv", data, *options, "--out", str(tmp_path / "out")]) == 0
    from radmetrics.inference.scoring.registry import available_metrics, metrics

    offline = {key for name in available_metrics({}) for key in metrics()[name].keys}
    assert {"bleu2", "bleu4", "rougeL", "bertscore", "semantic_green"} <= offline
    assert set(json.loads((tmp_path / "out" / "kendall_tau.json").read_text())["metrics"]) == offline


def test_preference_accuracy_ties_and_raters(rated, tmp_path):
    rows = []
    for i, row in enumerate(rated[:30]):
        worse = " ".join(split_sentences(row["reference"])[2:])
        first, second = (row["reference"], worse) if i % 2 else (worse, row["reference"])
        rows.append(
            {
                "reference": row["reference"],
                "candidate_1": first,
                "candidate_2": second,
                "r1": 1 if i % 2 else 2,
                "r2": (1 if i % 2 else 2) if i % 5 else "tie",
            }
        )
    data = write_csv(tmp_path / "pref.csv", rows)
    assert (
        main(
            [
                "meta-eval",
                "preference",
                "--csv",
                data,
                *"--preferred-columns r1 r2 --metrics rougeL --bootstrap 100 --out".split(),
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "out" / "preference_accuracy.json").read_text())["metrics"]["rougeL"]
    assert report["majority"]["accuracy"] == 1.0 and report["majority"]["n"] == 30
    assert report["per_rater"]["r2"]["human_ties_left_out"] == 6 and report["per_rater"]["r2"]["n"] == 24
    assert report["majority"]["ci95"] == [1.0, 1.0]


def test_compare_prints_differences_with_intervals(rated, tmp_path, capsys):
    refs = [r["reference"] for r in rated]
    (tmp_path / "refs.txt").write_text("\n".join(refs) + "\n")
    (tmp_path / "a.txt").write_text("\n".join(refs) + "\n")  # system A copies the reference
    (tmp_path / "b.txt").write_text(
        "\n".join(r["candidate"] if r["dropped"] else "No acute findings." for r in rated) + "\n"
    )
    assert compare_in(tmp_path, *"--metrics bleu4 rougeL --bootstrap 200 --permutations 500".split()) == 0
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())["keys"]
    for key in ("bleu4", "rougeL"):  # bleu4 is corpus-level: recomputed on each resample
        assert result[key]["difference"] > 0 and result[key]["ci95"][0] > 0 and result[key]["p_value"] < 0.01
    assert result["rougeL"]["a"] == pytest.approx(1.0)
    assert "| rougeL | 1.0000 |" in capsys.readouterr().out


def test_fit_radcliq_reports_held_out_and_scoring_uses_the_refit(tmp_path):
    from radmetrics.inference.metrics.base import MetricOutput
    from radmetrics.inference.metrics.radcliq.composite import FEATURES
    from radmetrics.inference.metrics.radcliq.metric import RadCliQ

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(80, 4))
    errors = 4 - 3 * x[:, 0] - x[:, 3] + rng.normal(0, 0.2, 80)
    rows = [{**dict(zip(FEATURES, row)), "total_errors": e} for row, e in zip(x, errors)]
    constants = tmp_path / "radcliq.json"
    assert (
        main(["meta-eval", "fit-radcliq", "--csv", write_csv(tmp_path / "f.csv", rows), "--out", str(constants)]) == 0
    )
    fitted = json.loads(constants.read_text())
    assert (
        fitted["held_out"]["folds"] == 5 and fitted["held_out"]["refit_tau_b"] > fitted["held_out"]["published_tau_b"]
    )
    upstream = {
        "radgraph": MetricOutput({"radgraph_radcliq": list(x[:5, 0])}),
        "bertscore": MetricOutput({"bertscore": list(x[:5, 1])}),
        "chexbert": MetricOutput({"chexbert_similarity": list(x[:5, 2])}),
        "bleu2": MetricOutput({"bleu2": list(x[:5, 3])}),
    }
    published = RadCliQ(upstream=upstream).compute([""] * 5, [""] * 5).per_sample
    refit = RadCliQ(upstream=upstream, constants=str(constants)).compute([""] * 5, [""] * 5).per_sample
    assert refit["radcliq_v0"] == published["radcliq_v0"] and refit["radcliq_v1"] != published["radcliq_v1"]
    (tmp_path / "bad.json").write_text('{"feature_order": ["bleu2"]}')
    with pytest.raises(ValueError, match="feature_order must be"):
        RadCliQ(upstream=upstream, constants=str(tmp_path / "bad.json")).compute([""] * 5, [""] * 5)


@pytest.mark.parametrize(
    "body, expected",
    [
        ('reference,candidate,rater_0\nHeart normal.,"Heart normal.,1\nLungs clear.,Lungs clear.,0\n', "line 2"),
        ("reference,candidate,rater_0\nHeart normal.,Heart normal.,1,7\n", "line 2: 4 fields where the header has 3"),
        ("reference,candidate,rater_0\nHeart normal.,Heart normal.,many\n", "line 2: rater_0 is 'many', not a number"),
    ],
)
def test_judgement_files_are_read_strictly(tmp_path, capsys, body, expected):
    """An unclosed quote or a row with more fields than the header is refused with its line, as report files are."""
    data = tmp_path / "rated.csv"
    data.write_text(body, encoding="utf-8")
    options = ["--human-columns", "rater_0", "--metrics", "rougeL", "--out", str(tmp_path / "out")]
    assert main(["meta-eval", "correlate", "--csv", str(data), *options]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"rated.csv: {expected}" in error
