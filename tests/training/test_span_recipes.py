"""Span extractor (RaTE-NER span, RadGraph-style): inputs and decoding, tiny recipes on the bundled corpus,
exports that score through `radmetrics score` next to every other component metric."""

import json

import numpy as np
import pytest
from cli_args import workload_args

from radmetrics.training.common.run_dir import read_eval_results

COMMON = (
    "--model_name_or_path tiny-bert --max_eval_samples 150 --per_device_train_batch_size 32 "
    "--learning_rate 0.003 --report_to none --save_strategy no --eval_strategy no --logging_steps 1000 "
    "--seed 0 --max_seq_length 48"
).split()
SPAN = [*COMMON, *"--head_learning_rate 0.003 --width_embedding_size 32 --head_hidden_size 128".split()]


@pytest.fixture(scope="module")
def silver_dir(tmp_path_factory, iu_reports):
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.silver.dataset import write_silver

    out = tmp_path_factory.mktemp("silver")
    write_silver(iu_reports, assign_splits(iu_reports), out, progress=False)
    return out


@pytest.fixture(scope="module")
def exports(silver_dir, tmp_path_factory):
    """Every encoder component trained for a few steps and exported: ({component: export}, {component: run dir})."""
    from radmetrics.training.chexbert import finetune
    from radmetrics.training.export import export_run
    from radmetrics.training.radgraph import train
    from radmetrics.training.rate_ner import iob, span

    root = tmp_path_factory.mktemp("runs")
    runs = {
        "rate_ner_span": span.main(
            [
                *SPAN,
                "--silver_dir",
                str(silver_dir),
                "--output_dir",
                str(root / "span"),
                "--max_train_samples",
                "4000",
                "--max_steps",
                "300",
            ]
        ),
        "radgraph": train.main(
            [
                *SPAN,
                "--silver_dir",
                str(silver_dir),
                "--output_dir",
                str(root / "radgraph"),
                *"--max_train_samples 600 --max_steps 150 --tune_relation_offsets true".split(),
            ]
        ),
        "rate_ner_iob": iob.main(
            [
                *COMMON,
                "--silver_dir",
                str(silver_dir),
                "--output_dir",
                str(root / "iob"),
                "--max_train_samples",
                "2000",
                "--max_steps",
                "40",
            ]
        ),
        "chexbert": finetune.main(
            [*COMMON, "--silver_dir", str(silver_dir), "--output_dir", str(root / "chexbert"), "--max_steps", "20"]
        ),
    }
    return {name: export_run(run, root / "exports" / name) for name, run in runs.items()}, runs


def test_span_inputs_cover_every_span_up_to_the_width():
    from radmetrics.inference.models.span_extraction import enumerate_spans

    spans = enumerate_spans(10, 8)
    assert (0, 7) in spans and (0, 8) not in spans and (9, 9) in spans
    assert len(spans) == sum(min(8, 10 - s) for s in range(10))


def test_decoding_keeps_the_most_confident_of_overlapping_spans():
    from radmetrics.inference.models.span_extraction import decode_entities

    spans = [(0, 0), (0, 1), (1, 1), (2, 2)]
    probabilities = np.array([[0.4, 0.6, 0.0], [0.1, 0.0, 0.9], [0.2, 0.8, 0.0], [0.9, 0.1, 0.0]])
    assert decode_entities(probabilities, spans) == [(0, 1, 2)]


def test_collator_pads_spans_and_relation_grids():
    from radmetrics.inference.models.span_extraction import SpanCollator

    class Pad:
        def pad(self, rows, return_tensors):
            import torch

            width = max(len(r["input_ids"]) for r in rows)
            return {"input_ids": torch.tensor([r["input_ids"] + [0] * (width - len(r["input_ids"])) for r in rows])}

    rows = [
        {
            "input_ids": [1, 2, 3],
            "span_starts": [1, 2],
            "span_ends": [1, 2],
            "span_widths": [0, 0],
            "span_labels": [1, 0],
            "entity_index": [0, 1],
            "relation_labels": [-100, 2, 0, -100],
        },
        {
            "input_ids": [1, 2],
            "span_starts": [1],
            "span_ends": [1],
            "span_widths": [0],
            "span_labels": [0],
            "entity_index": [],
            "relation_labels": [],
        },
    ]
    batch = SpanCollator(Pad())(rows)
    assert batch["span_labels"].tolist() == [[1, 0], [0, -100]]
    assert batch["entity_index"].tolist() == [[0, 1], [-1, -1]]
    assert (
        batch["relation_labels"][0].tolist() == [[-100, 2], [0, -100]] and (batch["relation_labels"][1] == -100).all()
    )


def test_relation_offsets_move_the_decision_and_are_chosen_by_macro_f1():
    from radmetrics.inference.models.span_extraction import relations_from_logits
    from radmetrics.training.span.decision_offsets import tune_relation_offsets

    labels = ["NULL", "modify", "suggestive_of"]
    entities = [[0, 0, "OBS-DP"], [2, 3, "OBS-U"]]
    # every pair: null 1.0, modify 0.0, suggestive_of 0.5; the gold relation of each sentence is suggestive_of 0 -> 1
    logits = np.tile(np.array([1.0, 0.0, 0.5]), (2, 2, 1))
    assert relations_from_logits(entities, logits, labels) == []
    assert relations_from_logits(entities, logits, labels, [0.0, 0.0, 0.75]) == [
        [0, 0, 2, 3, "suggestive_of"],
        [2, 3, 0, 0, "suggestive_of"],
    ]
    assert relations_from_logits([entities[0]], None, labels) == []
    gold = [{(0, 0, 2, 3, "suggestive_of")}] * 3
    tuned = tune_relation_offsets([(entities, logits)] * 3, gold, labels, grid=(-1.0, 0.0, 0.75, 1.5))
    assert tuned["offsets"] == [0.0, 0.0, 0.75]  # the smallest offset that predicts suggestive_of; modify stays absent
    assert tuned["validation_before"]["macro_f1"] == 0.0 and tuned["validation_after"]["macro_f1"] == pytest.approx(
        2 / 3
    )


def test_rate_ner_span_beats_the_word_majority_baseline(exports):
    results = read_eval_results(exports[1]["rate_ner_span"])
    assert results["test_f1"] > 0.5
    assert {"test_precision", "test_recall", "test_f1_ANATOMY", "baseline_word_majority_test_f1"} <= set(results)


def test_radgraph_extractor_learns_entities_and_relations(exports):
    results = read_eval_results(exports[1]["radgraph"])
    config = json.loads((exports[0]["radgraph"] / "config.json").read_text())
    assert (
        config["relation_decision_offsets"] == results["relation_decision_offsets"]
    )  # chosen on validation, exported
    assert len(config["relation_decision_offsets"]) == 4 and config["relation_decision_offsets"][0] == 0.0
    assert results["validation_relation_macro_f1_after"] >= results["validation_relation_macro_f1_before"]
    assert results["test_entity_f1"] > results["baseline_word_majority_test_entity_f1"]
    assert results["test_relation_f1"] > 0.3
    assert 0 <= results["radgraph_gold_entities_f1"] <= 1 and "silver_extractor_radgraph_gold_relations_f1" in results


def test_radgraph_export_emits_annotation_dicts(exports):
    from radmetrics.inference.metrics.radgraph.extractor import RadGraphExtractor
    from radmetrics.inference.metrics.radgraph.f1 import radgraph_f1

    extractor = RadGraphExtractor.from_export(str(exports[0]["radgraph"]))
    report = "Small left pleural effusion. No pneumothorax."
    (annotation,) = extractor.annotations([report])
    assert annotation["text"] == "Small left pleural effusion . No pneumothorax ."
    assert annotation["entities"], "the tiny extractor finds entities in a typical sentence"
    for entity in annotation["entities"].values():
        assert entity["label"] in ("ANAT-DP", "OBS-DP", "OBS-U", "OBS-DA")
        assert all(target in annotation["entities"] for _, target in entity["relations"])
    assert radgraph_f1(annotation, annotation, level="all") == (1.0, 1.0, 1.0)
    (empty,) = extractor.annotations([""])
    assert empty["entities"] == {} and radgraph_f1(empty, annotation, level="all") == (
        0.0,
        0.0,
        0.0,
    )  # as the reference


def test_score_cli_prints_every_component_metric(exports, test_data, tmp_path, capsys):
    from radmetrics.inference.cli import main

    workload = test_data / "synthetic_pairs" / "radeval_speed_workload.json"
    export_root = next(iter(exports[0].values())).parent
    options = ["--components", str(export_root), "--bootstrap", "100", "--out", str(tmp_path)]
    code = main(["score", *workload_args(workload), *options])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    from radmetrics.inference.scoring.registry import metrics

    expected = {
        key
        for name in (
            "bleu2",
            "bleu4",
            "rougeL",
            "bertscore",
            "ratescore",
            "radgraph",
            "radcliq",
            "chexbert",
            "semantic_green",
        )
        for key in metrics()[name].keys
    }
    assert {"radgraph_partial_precision", "chexbert_recall_14_micro", "semantic_green"} <= expected
    assert set(summary) == expected
    assert all(s["n"] == 20 and s["ci95"][0] <= s["value"] <= s["ci95"][1] for s in summary.values())
    printed = capsys.readouterr().out
    assert "| radcliq_v1 |" in printed and "| radgraph_partial |" in printed


def test_encoder_metrics_score_in_bf16_only_on_request(exports, test_data):
    from radmetrics.inference.scoring.scorer import Scorer

    pairs = json.loads((test_data / "synthetic_pairs" / "radeval_speed_workload.json").read_text())
    references, candidates = [p["ref"] for p in pairs], [p["hyp"] for p in pairs]
    components = {
        name: str(path) for name, path in exports[0].items() if name in ("radgraph", "rate_ner_span", "chexbert")
    }
    metrics = ["radgraph", "ratescore", "chexbert", "bertscore"]
    full = Scorer(metrics, components, n_bootstrap=0)(references, candidates)
    bf16 = Scorer(metrics, components, n_bootstrap=0, metric_options={m: {"precision": "bf16"} for m in metrics})(
        references, candidates
    )
    assert set(bf16.summary) == set(full.summary)
    for key in ("radgraph_partial", "ratescore", "chexbert_similarity", "bertscore"):
        assert abs(bf16.summary[key]["value"] - full.summary[key]["value"]) < 0.1, key
    with pytest.raises(ValueError, match="precision"):
        Scorer(["radgraph"], components, metric_options={"radgraph": {"precision": "fp8"}})(
            references[:1], candidates[:1]
        )
    with pytest.raises(ValueError, match="no option precision"):
        Scorer(["bleu4"], metric_options={"bleu4": {"precision": "bf16"}})(references[:1], candidates[:1])


def test_ratescore_runs_on_the_span_tagger(exports):
    from radmetrics.inference.scoring.scorer import Scorer

    refs = ["Small left pleural effusion. The heart is normal in size.", "No pneumothorax."]
    hyps = ["Small left pleural effusion. The heart is normal in size.", "."]  # no entity in the candidate
    result = Scorer(["ratescore"], {"rate_ner_span": str(exports[0]["rate_ner_span"])}, n_bootstrap=20)(refs, hyps)
    assert result.per_sample[0]["ratescore"] == pytest.approx(1.0, abs=1e-5)
    assert result.per_sample[1]["ratescore"] == 0.5


@pytest.mark.parametrize(
    "recipe, metrics",
    [
        ("rate_ner/span", {"eval/f1", "eval/f1_ANATOMY", "eval/macro_f1"}),
        (
            "radgraph/train",
            {"eval/entity_f1", "eval/relation_f1", "eval/relation_f1_suggestive_of", "eval/relation_macro_f1"},
        ),
    ],
)
def test_tiny_config_logs_the_component_metric_to_tensorboard(recipe, metrics, silver_dir, tmp_path):
    """configs/RECIPE/tiny.yaml as written (report_to: tensorboard): the event files hold the evaluation's span F1
    per type (RadGraph: end-to-end entity and relation F1) next to the loss."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from radmetrics.training.recipes import load_recipe

    run = load_recipe(recipe).main(
        [
            "--config",
            f"configs/{recipe}/tiny.yaml",
            "--silver_dir",
            str(silver_dir),
            "--output_dir",
            str(tmp_path),
            *(
                "--max_train_samples 300 --max_eval_samples 60 --max_steps 4 --eval_strategy steps "
                "--eval_steps 2 --logging_steps 2 --save_strategy no"
            ).split(),
        ]
    )
    events = [EventAccumulator(str(path.parent)).Reload() for path in (run / "runs").rglob("events.out.tfevents.*")]
    tags = {tag for accumulator in events for tag in accumulator.Tags()["scalars"]}
    assert {"train/loss", "eval/loss", *metrics} <= tags, sorted(tags)


def test_rewards_and_a_scorer_share_one_loaded_model(exports, monkeypatch):
    """Two rewards on one RadGraph component and a Scorer beside them load the extractor once in the process."""
    from radmetrics.inference.metrics import base
    from radmetrics.inference.metrics.radgraph import metric
    from radmetrics.inference.scoring.rewards import MetricReward
    from radmetrics.inference.scoring.scorer import Scorer

    base.clear_loaded_models()
    load, loads = metric.radgraph_extractor, []
    monkeypatch.setattr(metric, "radgraph_extractor", lambda *args: loads.append(args) or load(*args))
    components = {"radgraph": str(exports[0]["radgraph"])}
    refs, hyps = ["Mild cardiomegaly. No effusion."], ["No effusion."]
    partial, simple = MetricReward("radgraph_partial", components), MetricReward("radgraph_simple", components)
    rewards = partial(completions=hyps, reference=refs) + simple(completions=hyps, reference=refs)
    scored = Scorer(["radgraph"], components)(refs, hyps).per_sample[0]
    assert rewards == [scored["radgraph_partial"], scored["radgraph_simple"]] and len(loads) == 1
