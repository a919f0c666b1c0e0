"""The `small` configs of the encoder recipes (RaTE-NER IOB and span, RadGraph-style extractor) start from the bundled
pretrained MiniLM, report precision/recall/F1 and support for every class, macro F1 and the classes never predicted,
and write their test predictions. Two steps on a few
examples each; the full configs run in benchmarks/encoders/encoder_recipes_small.py."""

import json
from pathlib import Path

import pytest

from radmetrics.inference.loading.components import get_component
from radmetrics.training.common.run_dir import read_eval_results

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
FEW_STEPS = (
    "--max_steps 2 --max_train_samples 16 --max_eval_samples 12 --per_device_train_batch_size 8 "
    "--eval_strategy no --save_strategy no --load_best_model_at_end false --logging_steps 1000"
).split()
RATE_TYPES = get_component("rate_ner_span").label_map["labels"][1:]
RADGRAPH = get_component("radgraph").label_map
# recipe -> (eval_results prefix and classes, fields of each test prediction)
EXPECTED = {
    "rate_ner/iob": (
        [("test_", RATE_TYPES)],
        {"gold_tags", "predicted_tags", "gold", "predicted", "baseline_word_majority"},
    ),
    "rate_ner/span": ([("test_", RATE_TYPES)], {"gold", "predicted", "baseline_word_majority"}),
    "radgraph/train": (
        [("test_entity_", RADGRAPH["entities"][1:]), ("test_relation_", RADGRAPH["relations"][1:])],
        {
            "gold_entities",
            "predicted_entities",
            "baseline_word_majority_entities",
            "gold_relations",
            "predicted_relations",
        },
    ),
}


@pytest.fixture(scope="module")
def silver_dir(tmp_path_factory, iu_reports):
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.silver.dataset import write_silver

    reports = [r for r in iu_reports if r.text][:300]
    out = tmp_path_factory.mktemp("silver")
    write_silver(reports, assign_splits(reports), out, labelers=["rate_ner", "radgraph"], progress=False)
    return out


def encoder_weights(model):
    return next(p for n, p in model.named_parameters() if n.endswith("word_embeddings.weight")).detach()


@pytest.mark.parametrize("recipe", list(EXPECTED))
def test_small_config_starts_from_minilm_and_reports_every_class(recipe, silver_dir, tmp_path):
    import torch
    from transformers import AutoModel

    from radmetrics.inference.loading.hub import default_encoder
    from radmetrics.training.common.run_dir import read_run_manifest
    from radmetrics.training.config import read_yaml
    from radmetrics.training.recipes import load_recipe

    config = CONFIGS / recipe / "small.yaml"
    assert read_yaml(config)["model_name_or_path"] == "default"
    run_dir = load_recipe(recipe).main(
        ["--config", str(config), "--silver_dir", str(silver_dir), "--output_dir", str(tmp_path / "run"), *FEW_STEPS]
    )
    assert read_run_manifest(run_dir)["base_model"] == "default"
    final = AutoModel.from_pretrained(run_dir / "final")
    pretrained = encoder_weights(AutoModel.from_pretrained(default_encoder()))
    assert torch.allclose(encoder_weights(final), pretrained, atol=1e-2), "two steps from MiniLM stay near its weights"

    results = read_eval_results(run_dir)
    groups, fields = EXPECTED[recipe]
    for prefix, classes in groups:
        assert {f"{prefix}{m}_{c}" for m in ("precision", "recall", "f1", "support") for c in classes} <= set(results)
        assert 0.0 <= results[f"{prefix}macro_f1"] <= 1.0 and set(results[f"{prefix}never_predicted"]) <= set(classes)
    predictions = [json.loads(line) for line in (run_dir / "test_predictions.jsonl").read_text().splitlines()]
    assert predictions and all({"id", "report_id", "tokens", *fields} <= set(p) for p in predictions)
    assert len({p["id"] for p in predictions}) == len(predictions)


def test_iob_predictions_are_read_per_word_from_the_first_subword():
    from radmetrics.training.rate_ner.iob import first_subword_tags

    labels = ["O", "B-ANATOMY", "I-ANATOMY"]
    word_ids = [None, 0, 0, 1, None]  # word 2 was cut off by truncation
    assert first_subword_tags(word_ids, [0, 1, 0, 2, 0], 3, labels) == ["B-ANATOMY", "I-ANATOMY", "O"]
