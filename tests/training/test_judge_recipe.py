"""judge/pairs: the tiny cross-encoder trains on finding pairs, records held-out results beside its baselines,
exports with the finding_judge manifest, and the export loads and decides pairs in inference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from radmetrics.inference.findings.judge_labels import JUDGE_LABELS, JudgeDecision

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def judge_run(tmp_path_factory, iu_reports):
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.judge_pairs.build import build_judge_pairs
    from radmetrics.data_builders.judge_pairs.command import write_judge_pairs
    from radmetrics.training.judge.pairs import main

    root = tmp_path_factory.mktemp("judge")
    reports = iu_reports[:300]
    write_judge_pairs(
        build_judge_pairs(reports, assign_splits(reports), per_label=20),
        root / "pairs",
        {"corpus": "iu_xray", "path": "bundled", "split_by": "text"},
    )
    args = [
        "--config",
        "configs/judge/pairs/tiny_cross_encoder.yaml",
        "--pairs_dir",
        str(root / "pairs"),
        "--output_dir",
        str(root / "run"),
        "--max_train_samples",
        "64",
        "--max_eval_samples",
        "48",
        "--num_train_epochs",
        "1",
        "--tiny_vocab_size",
        "300",
        "--per_device_train_batch_size",
        "16",
    ]
    return main(args)


def test_tiny_judge_records_held_out_results(judge_run):
    results = json.loads((judge_run / "eval_results.json").read_text())
    for key in (
        "test_macro_f1",
        "test_decision_accuracy",
        "baseline_majority_test_macro_f1",
        "baseline_rules_test_decision_accuracy",
        "test_support_same",
    ):
        assert key in results
    predictions = (judge_run / "test_predictions.jsonl").read_text().splitlines()
    assert sum(results[f"test_support_{label}"] for label in JUDGE_LABELS) == len(predictions) > 0
    assert set(json.loads(predictions[0])) >= {"label", "predicted", "rules", "majority"}
    assert (judge_run / "final" / ".complete").exists()


def test_export_loads_and_decides(judge_run, tmp_path):
    from radmetrics.inference.loading.checkpoint import load_manifest
    from radmetrics.inference.metrics.semantic_green.judge import FindingJudge
    from radmetrics.training.export import export_run

    out = export_run(judge_run, tmp_path / "export")
    _, manifest = load_manifest(out, "finding_judge")
    assert manifest["label_map"] == {"labels": list(JUDGE_LABELS)}
    assert "finding_judge" in (out / "README.md").read_text()
    judge = FindingJudge(out, batch_size=2)
    pairs = [
        ("Small left effusion.", "Large left effusion."),
        ("No pneumothorax.", "Pneumothorax."),
        ("Small left effusion.", "Large left effusion."),
    ]
    decisions = judge.decide(pairs)  # threshold 0, scope all: every pair whose most probable label is not `same`
    assert len(decisions) == 3 and all(d is None or isinstance(d, JudgeDecision) for d in decisions)
    assert decisions[0] == decisions[2]
    rows = judge.probabilities(pairs)
    for row, decision in zip(rows, decisions):
        top = JUDGE_LABELS[int(row.argmax())]
        assert (decision is None) == (top == "same") and (decision is None or decision.label == top)
    assert judge.decide(pairs, threshold=1.0) == [None, None, None]  # no probability exceeds 1: the rules decide


def test_judge_model_at_threshold_one_scores_as_the_rules(judge_run, tmp_path):
    """semantic_green.judge_threshold=1.0 lets the judge override nowhere: judge=model's values are judge=rules'
    exactly (over every statement, where no abbreviation is read differently); threshold 0 runs the judge's decisions
    through the same keys."""
    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.export import export_run

    out = export_run(judge_run, tmp_path / "export")
    references = ["Moderate right pleural effusion. No pneumothorax.", "8 mm nodule in the right lower lobe."]
    candidates = ["Large right pleural effusion. No pneumothorax.", "Right lower lobe nodule measuring 18 mm."]

    def values(**options):
        chosen = {"semantic_green": {"findings": "statements", **options}}
        components = {"finding_judge": str(out)} if options.get("judge") == "model" else {}
        return Scorer(["semantic_green"], components, chosen, n_bootstrap=0)(references, candidates).per_sample

    rules = values(judge="rules")
    assert values(judge="model", judge_threshold=1.0) == rules
    assert values(judge="model", judge_threshold=1.0, judge_scope="all") == rules
    judged = values(judge="model", judge_threshold=0.0, judge_scope="all")
    assert len(judged) == len(rules) and [set(v) for v in judged] == [set(v) for v in rules]


@pytest.fixture(scope="module")
def feature_run(tmp_path_factory, iu_reports):
    """The tiny config (architecture pair_features) on finding pairs of 300 reports."""
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.judge_pairs.build import build_judge_pairs
    from radmetrics.data_builders.judge_pairs.command import write_judge_pairs
    from radmetrics.training.judge.pairs import main

    root = tmp_path_factory.mktemp("feature_judge")
    reports = iu_reports[:300]
    write_judge_pairs(
        build_judge_pairs(reports, assign_splits(reports), per_label=20),
        root / "pairs",
        {"corpus": "iu_xray", "path": "bundled", "split_by": "text"},
    )
    args = ["--config", "configs/judge/pairs/tiny.yaml", "--pairs_dir", str(root / "pairs")]
    return main([*args, "--output_dir", str(root / "run"), "--num_train_epochs", "30"])


def test_the_feature_judge_trains_exports_and_decides(feature_run, tmp_path):
    from radmetrics.inference.metrics.semantic_green.judge import FeatureJudge, load_judge
    from radmetrics.training.export import export_run

    results = json.loads((feature_run / "eval_results.json").read_text())
    assert {"test_macro_f1", "baseline_rules_test_macro_f1", "validation_macro_f1"} <= set(results)
    out = export_run(feature_run, tmp_path / "export")
    judge = load_judge(out)
    assert isinstance(judge, FeatureJudge)
    pairs = [("8 mm nodule in the right lower lobe.", "18 mm nodule in the right lower lobe.")] * 2
    rows = judge.probabilities(pairs, [0.9, 0.9])
    assert rows.shape == (2, len(JUDGE_LABELS)) and (rows[0] == rows[1]).all()
    assert judge.decide(pairs, threshold=1.0, cosines=[0.9, 0.9]) == [None, None]
    assert judge.probabilities(pairs).shape == rows.shape  # cosines computed by the judge's own encoder
    # a training run whose final/ is complete is not trained again
    assert (feature_run / "final" / ".complete").exists()


def _write_pairs(root, labels_by_split: dict) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for split, labels in labels_by_split.items():
        rows = [
            {"id": f"{split}-{n}", "reference": "Small effusion.", "candidate": "Effusion.", "label": label}
            for n, label in enumerate(labels)
        ]
        (root / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_rehearsal_checks_the_users_judge_pairs_before_it_launches(tmp_path):
    """`radmetrics rehearse configs/judge/pairs/base.yaml -- --pairs_dir DIR` reads DIR as the run will: a missing
    split or an unknown label is one line naming it; good pairs get the rehearsal's few-records limits."""
    from radmetrics.training.rehearsal import DATA_LIMITS, RehearsalError, user_data_overrides

    config = REPO / "configs/judge/pairs/base.yaml"
    good, missing, unknown = tmp_path / "good", tmp_path / "missing", tmp_path / "unknown"
    _write_pairs(good, {split: ["same", "unrelated"] for split in ("train", "validation", "test")})
    _write_pairs(missing, {"train": ["same"], "test": ["same"]})
    _write_pairs(unknown, {"train": ["same"], "validation": ["similar"], "test": ["same"]})
    assert user_data_overrides("judge/pairs", config, ["--pairs_dir", str(good)]) == DATA_LIMITS["judge/pairs"]
    assert user_data_overrides("judge/pairs", config, []) is None  # the rehearsal builds the bundled corpus' pairs
    with pytest.raises(RehearsalError, match="no validation.jsonl"):
        user_data_overrides("judge/pairs", config, ["--pairs_dir", str(missing)])
    with pytest.raises(RehearsalError, match="unknown label 'similar'"):
        user_data_overrides("judge/pairs", config, ["--pairs_dir", str(unknown)])


def test_the_judge_gpu_config_is_the_cross_encoder_on_a_known_base_model():
    import yaml
    from transformers import AutoModelForSequenceClassification

    from radmetrics.training.lookalike import family_of
    from radmetrics.training.rehearsal import _auto_class, base_model_of, gpu_configs

    path = REPO / "configs/judge/pairs/base.yaml"
    config = yaml.safe_load(path.read_text())
    assert path in gpu_configs() and config["architecture"] == "cross_encoder"
    assert family_of(base_model_of(config, REPO / "configs")) == "bert"
    assert _auto_class("finding_judge", "bert") is AutoModelForSequenceClassification
