"""Export -> load round trip of a tiny encoder, and refusal of tampered or mismatched checkpoints."""

import json

import pytest

from radmetrics.inference.loading.checkpoint import MANIFEST_NAME, CheckpointError, load_manifest
from radmetrics.inference.loading.components import get_component
from radmetrics.training.export import export_run
from radmetrics.training.run_dir import mark_complete, model_to_export, write_eval_results, write_run_manifest


def _tiny_token_classifier(tokenizer_dir, out_dir):
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from radmetrics.training.tiny import tiny_bert_config

    labels = get_component("rate_ner_iob").label_map["labels"]
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = tiny_bert_config(len(tokenizer), num_labels=len(labels),
                              id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    model = AutoModelForTokenClassification.from_config(config)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    mark_complete(out_dir)
    return model


@pytest.fixture
def run_dir(tmp_path, wordpiece_dir):
    run = tmp_path / "run"
    write_run_manifest(run, component="rate_ner_iob", recipe="test", base_model="random tiny bert",
                       config={"lr": 1e-3}, data_provenance={"corpus": "iu_xray"})
    _tiny_token_classifier(wordpiece_dir, run / "final")
    (run / "final" / "optimizer.pt").write_bytes(b"not exported")
    write_eval_results(run, {"eval_f1": 0.5})
    return run


def test_round_trip(run_dir, tmp_path):
    import torch
    from transformers import AutoModelForTokenClassification

    out = export_run(run_dir, tmp_path / "export")
    directory, manifest = load_manifest(out, "rate_ner_iob")
    assert manifest["component"] == "rate_ner_iob" and "model.safetensors" in manifest["files"]
    assert not (out / "optimizer.pt").exists() and not list(out.glob("*.bin"))
    card = (out / "README.md").read_text()
    assert card.startswith("---") and "| eval_f1 | 0.5000 |" in card and manifest["eval_results"] == {"eval_f1": 0.5}
    original = AutoModelForTokenClassification.from_pretrained(run_dir / "final")
    loaded = AutoModelForTokenClassification.from_pretrained(directory)
    ids = torch.tensor([[2, 10, 11, 3]])
    torch.testing.assert_close(original(input_ids=ids).logits, loaded(input_ids=ids).logits)


def test_refuses_tampered_weights(run_dir, tmp_path):
    out = export_run(run_dir, tmp_path / "export")
    weights = out / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="checksum of model.safetensors"):
        load_manifest(out, "rate_ner_iob")


def test_refuses_tampered_manifest(run_dir, tmp_path):
    out = export_run(run_dir, tmp_path / "export")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"]["config.json"] = "0" * 64
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="config.json"):
        load_manifest(out, "rate_ner_iob")
    del manifest["schema_version"]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="schema_version"):
        load_manifest(out, "rate_ner_iob")


def test_refuses_label_map_mismatch(run_dir, tmp_path):
    out = export_run(run_dir, tmp_path / "export")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["label_map"]["labels"] = list(reversed(manifest["label_map"]["labels"]))
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="label map"):
        load_manifest(out, "rate_ner_iob")


def test_refuses_model_whose_config_labels_differ(run_dir, tmp_path):
    config_path = run_dir / "final" / "config.json"
    config = json.loads(config_path.read_text())
    config["id2label"]["1"], config["id2label"]["2"] = config["id2label"]["2"], config["id2label"]["1"]
    config_path.write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="id2label"):
        export_run(run_dir, tmp_path / "export")


def test_refuses_wrong_component(run_dir, tmp_path):
    out = export_run(run_dir, tmp_path / "export")
    with pytest.raises(CheckpointError, match="'chexbert' checkpoint was asked for"):
        load_manifest(out, "chexbert")


def test_incomplete_checkpoints_are_skipped(tmp_path, wordpiece_dir):
    run = tmp_path / "run"
    write_run_manifest(run, component="rate_ner_iob", recipe="t", base_model="b", config={}, data_provenance={})
    _tiny_token_classifier(wordpiece_dir, run / "checkpoint-10")
    (run / "checkpoint-20").mkdir()  # a save that crashed: no .complete marker
    assert model_to_export(run).name == "checkpoint-10"


def test_missing_checkpoint_is_clear(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_manifest(tmp_path / "nothing", "chexbert")
