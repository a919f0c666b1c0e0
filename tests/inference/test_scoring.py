import json

import numpy as np
import pytest
from cli_args import workload_args

from radmetrics.inference.cli import main
from radmetrics.inference.files.report_io import ReportFileError, read_reports
from radmetrics.inference.metrics.radcliq.composite import FEATURES, _params, fit_radcliq, radcliq_v0, radcliq_v1
from radmetrics.inference.scoring.registry import UnknownMetricError
from radmetrics.inference.scoring.scorer import MissingComponentError, Scorer, ScoringInputError
from radmetrics.inference.scoring.stats import bootstrap_ci, kendall_tau, paired_comparison, paired_means

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)

REFS = ["No acute cardiopulmonary process.", "Mild cardiomegaly.", "Small left pleural effusion.", "Lungs are clear."]
HYPS = ["No acute cardiopulmonary process.", "The heart is mildly enlarged.", "No pleural effusion.", "Normal chest."]


def test_scorer_summary_and_per_sample():
    result = Scorer(["bleu2", "rougeL", "bleu4"], n_bootstrap=200)(REFS, HYPS, ids=["a", "b", "c", "d"])
    assert list(result.summary) == ["bleu2", "bleu4", "rougeL"]
    assert result.per_sample[0]["id"] == "a" and result.per_sample[0]["rougeL"] == 1.0
    assert result.per_sample[3]["rougeL"] == 0.0  # no word in common
    assert result.summary["rougeL"]["higher_is_better"] and result.higher_is_better["bleu4"]
    s = result.summary["rougeL"]
    assert s["ci95"][0] <= s["value"] <= s["ci95"][1] and s["n"] == 4
    assert "| rougeL |" in result.table()


def test_bad_input_is_named():
    with pytest.raises(ScoringInputError, match="4 references but 3 candidates"):
        Scorer(["bleu2"])(REFS, HYPS[:3])
    with pytest.raises(ScoringInputError, match="pair 2: the candidate is int"):
        Scorer(["bleu2"])(REFS, HYPS[:2] + [3, "x"])
    with pytest.raises(ScoringInputError, match="pair 3: the reference is empty"):
        Scorer(["bleu2"])(REFS[:3] + ["  "], HYPS)
    with pytest.raises(UnknownMetricError, match="bleu5"):
        Scorer(["bleu5"])


def test_missing_component_is_named(monkeypatch):
    from radmetrics.inference.metrics.base import Metric
    from radmetrics.inference.scoring import registry

    class NeedsCheXbert(Metric):
        name, keys, requires_components = "needs_chexbert", ("k",), ("chexbert",)

    monkeypatch.setitem(registry.REGISTRY, "needs_chexbert", NeedsCheXbert)
    with pytest.raises(MissingComponentError, match="needs_chexbert needs chexbert"):
        Scorer(["needs_chexbert"])


def test_radcliq_options_replace_the_metrics_they_stand_in_for():
    """RadCliQ's radgraph_model / bertscore_model compute those features with models of its own: the run then skips
    the radgraph and bertscore metrics (unless asked for) and needs no radgraph component."""
    from radmetrics.inference.scoring.registry import REGISTRY, resolve

    def names(metrics, options=None):
        return [spec.name for spec in resolve(metrics, options)]

    assert names(["radcliq"]) == ["bleu2", "bertscore", "chexbert", "radgraph", "radcliq"]
    assert names(["radcliq"], {"radcliq": {"bertscore_model": "m"}}) == ["bleu2", "chexbert", "radgraph", "radcliq"]
    assert names(["radcliq"], {"radcliq": {"radgraph_model": "m", "bertscore_model": "m"}}) == [
        "bleu2",
        "chexbert",
        "radcliq",
    ]
    assert names(["radcliq", "bertscore"], {"radcliq": {"bertscore_model": "m"}}) == [
        "bleu2",
        "bertscore",
        "chexbert",
        "radgraph",
        "radcliq",
    ]
    assert names(["radcliq"], {"bertscore": {"bertscore_model": "m"}}) == names(
        ["radcliq"]
    )  # another metric's options
    radcliq = REGISTRY["radcliq"]
    assert radcliq.missing_components({"chexbert": "c"}) == ["radgraph"]
    assert radcliq.missing_components({"chexbert": "c"}, options={"radgraph_model": "m"}) == []
    assert radcliq.missing_components({}, options={"radgraph_model": "m"}) == ["chexbert"]
    components = {"chexbert": "c", "radgraph": "r"}
    with pytest.raises(ValueError, match="precision applies to its own models"):
        Scorer(["radcliq"], components, {"radcliq": {"precision": "bf16"}})  # nothing of its own to run in bf16
    scorer = Scorer(["radcliq"], components, {"radcliq": {"precision": "bf16", "bertscore_model": "m"}})
    assert scorer.metrics()[-1].options["precision"] == "bf16"


def test_report_files(tmp_path):
    (tmp_path / "r.txt").write_text("a\nb\n")
    assert read_reports(tmp_path / "r.txt") == (["a", "b"], None)
    (tmp_path / "r.jsonl").write_text('{"id": 1, "report": "a"}\n{"id": 2, "report": "b"}\n')
    assert read_reports(tmp_path / "r.jsonl") == (["a", "b"], ["1", "2"])
    (tmp_path / "bad.txt").write_bytes(b"fine\n\xff\xfe bad\n")
    with pytest.raises(ReportFileError, match="line 2 is not UTF-8"):
        read_reports(tmp_path / "bad.txt")
    (tmp_path / "r.csv").write_text("x\n1\n")
    with pytest.raises(ReportFileError, match="line 2 has no field"):
        read_reports(tmp_path / "r.csv")


def test_score_cli_on_workload(test_data, tmp_path, capsys):
    workload = test_data / "synthetic_pairs" / "radeval_speed_workload.json"
    options = "--metrics bleu2 bleu4 rougeL bertscore --bootstrap 100 --out".split()
    code = main(["score", *workload_args(workload), *options, str(tmp_path)])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary) == {"bleu2", "bleu4", "rougeL", "bertscore"} and summary["bertscore"]["n"] == 20
    rows = [json.loads(line) for line in (tmp_path / "per_sample.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and set(rows[0]) == {"id", "bleu2", "bleu4", "rougeL", "bertscore"}
    assert "| bertscore |" in capsys.readouterr().out


def test_bertscore_prefers_identity_and_paraphrase():
    out = Scorer(["bertscore"], n_bootstrap=0)(
        ["Mild cardiomegaly.", "Mild cardiomegaly.", "Mild cardiomegaly."],
        ["Mild cardiomegaly.", "The heart is mildly enlarged.", "Fracture of the left clavicle."],
    )
    a, b, c = (row["bertscore"] for row in out.per_sample)
    assert a == pytest.approx(1.0, abs=1e-5) and a > b > c


def test_bertscore_idf_weights_come_from_each_calls_references_on_one_loaded_model():
    """RadCliQ's setting (idf over the references, CXR-Report-Metric): each call equals a bert-score scorer built with
    that call's references, while radmetrics loads the encoder once."""
    from bert_score import BERTScorer

    from radmetrics.inference.loading.hub import default_encoder
    from radmetrics.inference.metrics.base import _SHARED
    from radmetrics.inference.metrics.bertscore.metric import DEFAULT_BASELINE, DEFAULT_LAYER

    before = set(_SHARED)  # models that other tests of this process loaded
    scorer = Scorer(["bertscore"], metric_options={"bertscore": {"idf": True}}, n_bootstrap=0)
    calls = [(REFS, HYPS), (HYPS[::-1], REFS[::-1])]
    for refs, hyps in calls:
        ours = [row["bertscore"] for row in scorer(refs, hyps).per_sample]
        theirs = BERTScorer(
            model_type=str(default_encoder()),
            num_layers=DEFAULT_LAYER,
            idf=True,
            idf_sents=refs,
            rescale_with_baseline=True,
            baseline_path=str(DEFAULT_BASELINE),
            lang="en",
        )
        assert ours == pytest.approx([float(f) for f in theirs.score(hyps, refs)[2]], abs=1e-6)
    assert sum(key[1] == "BertScore" and "'idf', True" in key[3] for key in set(_SHARED) - before) <= 1


def test_bertscore_gives_roberta_tokenizers_the_prefix_space_bert_score_asks_for(tmp_path):
    """bert-score encodes RoBERTa-family sentences with add_prefix_space=True, which transformers 5 ignores: radmetrics
    reloads such a tokenizer with the prefix space, so the first word is the same token as elsewhere (as RadEval does).
    """
    from bert_score import BERTScorer
    from bert_score.utils import sent_encode
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel

    from radmetrics.inference.loading.hub import default_encoder
    from radmetrics.inference.metrics.bertscore.metric import with_prefix_space

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(REFS + HYPS, vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(tmp_path))
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "RobertaTokenizer", "model_max_length": 512})
    )
    config = RobertaConfig(
        vocab_size=300, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32
    )
    RobertaModel(config).save_pretrained(tmp_path)
    plain = BERTScorer(model_type=str(tmp_path), num_layers=1)
    first = plain._tokenizer.convert_ids_to_tokens(sent_encode(plain._tokenizer, "Mild cardiomegaly."))[1]
    assert not first.startswith("\u0120")  # what bert-score's own encoding gives on transformers 5
    fixed = with_prefix_space(BERTScorer(model_type=str(tmp_path), num_layers=1))
    assert fixed._tokenizer.tokenize("Mild cardiomegaly.")[0].startswith("\u0120")
    out = Scorer(
        ["bertscore"],
        metric_options={"bertscore": {"model": str(tmp_path), "num_layers": 1, "rescale_with_baseline": False}},
        n_bootstrap=0,
    )(REFS, HYPS)
    assert [row["bertscore"] for row in out.per_sample] == pytest.approx(
        [float(f) for f in fixed.score(HYPS, REFS)[2]]
    )
    bert = BERTScorer(model_type=str(default_encoder()), num_layers=1)
    assert with_prefix_space(bert)._tokenizer is bert._tokenizer  # WordPiece tokenizers are left alone


def test_radcliq_constants():
    p = _params()["radcliq_v1"]
    # at the scaler mean every normalised feature is 0, so the score is the bias
    assert radcliq_v1(*p["scaler_mean_"]) == pytest.approx(p["coefs_with_bias_last"][-1], abs=1e-9)
    v0 = _params()["radcliq_v0"]
    assert radcliq_v0(*v0["normalizer_mean_"]) == pytest.approx(v0["intercept_"])
    # better sub-scores, fewer predicted errors
    assert radcliq_v1(0.9, 0.9, 0.9, 0.9) < radcliq_v1(0.1, 0.1, 0.1, 0.1)
    arr = radcliq_v1(np.array([0.5, 0.6]), np.array([0.5, 0.6]), np.array([0.7, 0.8]), np.array([0.3, 0.4]))
    assert arr.shape == (2,)


def test_fit_radcliq_constraints():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(160, len(FEATURES)))
    errors = 5 - (0.5 * x[:, 0] + 0.3 * x[:, 1] + 0.2 * x[:, 2]) * 4 + rng.normal(0, 0.05, 160)
    fit = fit_radcliq(x, errors)
    w = np.array(fit["coefs_with_bias_last"][:-1])
    assert np.all(w <= 1e-8) and np.isclose(-w.sum(), 1.0, atol=1e-6)
    assert -w[0] > -w[3]


def test_statistics():
    rng = np.random.default_rng(1)
    a = rng.normal(0.6, 0.1, 200)
    b = a - 0.05 + rng.normal(0, 0.01, 200)
    better = paired_means(a, b, 500, 2000)
    assert (
        better["difference"] == pytest.approx(0.05, abs=0.005) and better["ci95"][0] > 0 and better["p_value"] < 0.01
    )
    assert paired_means(a, a + rng.normal(0, 0.01, 200), 500, 2000)["p_value"] > 0.01
    # a corpus-level statistic (a ratio of sums) is recomputed on every resample and permutation
    hits, totals = np.concatenate([a * 10, b * 10]), np.full(400, 10.0)
    ratio = paired_comparison(lambda idx: hits[idx].sum() / totals[idx].sum(), 200, 300, 1000)
    assert ratio["a"] == pytest.approx(a.mean()) and ratio["p_value"] < 0.01 and ratio["ci95"][0] > 0
    lo, hi = bootstrap_ci(lambda idx: a[idx].mean(), len(a), 500)
    assert lo < a.mean() < hi
    noisy = -a + rng.normal(0, 0.01, 200)
    for variant in ("b", "c"):
        tau = kendall_tau(a, noisy, variant, 200)
        assert tau[f"tau_{variant}"] < -0.8 and tau["ci95"][0] <= tau[f"tau_{variant}"] <= tau["ci95"][1]
    # with few distinct human values tau-c and tau-b differ
    coarse = np.round(a * 4) / 4
    assert kendall_tau(a, coarse, "b", 10)["tau_b"] != kendall_tau(a, coarse, "c", 10)["tau_c"]
