"""Export -> load round trip of a tiny encoder, and refusal of tampered or mismatched checkpoints."""

import json

import pytest

from radmetrics.inference.loading.checkpoint import MANIFEST_NAME, CheckpointError, load_manifest
from radmetrics.inference.loading.components import get_component
from radmetrics.training.common.run_dir import (
    RUN_MANIFEST,
    mark_complete,
    model_to_export,
    write_eval_results,
    write_run_manifest,
)
from radmetrics.training.export import export_run


def _tiny_token_classifier(tokenizer_dir, out_dir):
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from radmetrics.training.tiny import tiny_bert_config

    labels = get_component("rate_ner_iob").label_map["labels"]
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = tiny_bert_config(
        len(tokenizer),
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={l: i for i, l in enumerate(labels)},
    )
    model = AutoModelForTokenClassification.from_config(config)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    mark_complete(out_dir)
    return model


@pytest.fixture
def run_dir(tmp_path, wordpiece_dir):
    run = tmp_path / "run"
    write_run_manifest(
        run,
        component="rate_ner_iob",
        recipe="test",
        base_model="random tiny bert",
        config={"lr": 1e-3},
        data_provenance={"corpus": "iu_xray"},
    )
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


def _flip_last_byte(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def test_refuses_tampered_weights_when_verifying(run_dir, tmp_path):
    from radmetrics.inference.cli import main

    out = export_run(run_dir, tmp_path / "export")
    _flip_last_byte(out / "model.safetensors")
    with pytest.raises(CheckpointError, match="checksum of model.safetensors"):
        load_manifest(out, "rate_ner_iob", verify_checksums=True)
    assert main(["weights", "verify", str(out)]) == 2
    (out / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model.safetensors listed in the manifest is missing"):
        load_manifest(out, "rate_ner_iob")  # presence is checked on every load


def test_checksums_are_checked_at_export_and_on_first_download_not_on_every_load(run_dir, tmp_path, monkeypatch):
    """Hashing a 7B checkpoint takes minutes: a local export was hashed when written, a Hub snapshot is hashed the
    first time it is loaded (and refused if corrupt), and later loads only check that the files are there."""
    import radmetrics.inference.loading.checkpoint as checkpoint

    out = export_run(run_dir, tmp_path / "export")
    hashed = []
    original = checkpoint.sha256_file
    monkeypatch.setattr(checkpoint, "sha256_file", lambda path, *a: hashed.append(path) or original(path, *a))
    load_manifest(out, "rate_ner_iob")
    assert hashed == []

    # the same export as a Hub snapshot in an offline HF cache
    snapshot = tmp_path / "hf" / "hub" / "models--lab--rate-ner" / "snapshots" / ("a" * 40)
    snapshot.parent.mkdir(parents=True)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("a" * 40)
    import shutil

    shutil.copytree(out, snapshot)
    _flip_last_byte(snapshot / "model.safetensors")
    import huggingface_hub.constants

    monkeypatch.setattr(
        huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub")
    )  # read at import otherwise
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "radmetrics-cache"))
    with pytest.raises(CheckpointError, match="checksum of model.safetensors"):
        load_manifest("lab/rate-ner", "rate_ner_iob")
    _flip_last_byte(snapshot / "model.safetensors")  # repaired
    hashed.clear()
    directory, _ = load_manifest("lab/rate-ner", "rate_ner_iob")
    assert directory == snapshot and len(hashed) > 1
    hashed.clear()
    load_manifest("lab/rate-ner", "rate_ner_iob")
    assert hashed == []  # verified once per snapshot


def test_refuses_tampered_manifest(run_dir, tmp_path):
    out = export_run(run_dir, tmp_path / "export")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"]["config.json"] = "0" * 64
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="config.json"):
        load_manifest(out, "rate_ner_iob", verify_checksums=True)
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


def test_card_names_the_hub_base_model_through_a_stage_one_run_and_its_licence(run_dir, tmp_path):
    stage1 = tmp_path / "stage1"
    write_run_manifest(
        stage1,
        component="green",
        recipe="green/pretrain",
        base_model="mistralai/Mistral-7B-v0.1",
        config={},
        data_provenance={},
    )
    (stage1 / "final").mkdir()
    manifest = json.loads((run_dir / RUN_MANIFEST).read_text())
    manifest["base_model"] = str(stage1 / "final")  # stage 2 starts from stage 1's final/
    (run_dir / RUN_MANIFEST).write_text(json.dumps(manifest))
    card = (export_run(run_dir, tmp_path / "export") / "README.md").read_text()
    metadata = card.split("---")[1]
    assert "base_model: mistralai/Mistral-7B-v0.1\n" in metadata and "license: apache-2.0\n" in metadata

    manifest["base_model"] = "tiny-bert"  # random weights: no base model to name, licence unknown unless given
    (run_dir / RUN_MANIFEST).write_text(json.dumps(manifest))
    metadata = (export_run(run_dir, tmp_path / "export2") / "README.md").read_text().split("---")[1]
    assert "base_model" not in metadata and "license: other\n" in metadata
    metadata = (
        (export_run(run_dir, tmp_path / "export3", license="cc-by-nc-4.0") / "README.md").read_text().split("---")[1]
    )
    assert "license: cc-by-nc-4.0\n" in metadata


def test_hub_push_is_private_by_default(run_dir, tmp_path, monkeypatch):
    import huggingface_hub

    created = []

    class RecordingApi:
        def create_repo(self, repo_id, private, exist_ok):
            created.append((repo_id, private))

        def upload_folder(self, **kwargs):
            pass

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    export_run(run_dir, tmp_path / "export", push_to_hub="lab/green")
    from radmetrics.inference.cli import main

    assert main(["export", str(run_dir), "--out", str(tmp_path / "export2"), "--push-to-hub", "lab/green2"]) == 0
    assert (
        main(["export", str(run_dir), "--out", str(tmp_path / "export3"), "--push-to-hub", "lab/green3", "--public"])
        == 0
    )
    assert created == [("lab/green", True), ("lab/green2", True), ("lab/green3", False)]


def test_the_card_shows_each_class_and_flags_one_never_predicted():
    from radmetrics.training.export import render_model_card
    from radmetrics.training.span.scores import span_scores

    results = span_scores(
        [{(0, 1, "ANATOMY"), (3, 3, "DISEASE")}], [{(0, 1, "ANATOMY")}], ["ANATOMY", "DISEASE"], prefix="test_"
    )
    card = render_model_card(
        {"component": "rate_ner_span", "schema_version": 1, "label_map": {}, "eval_results": results}
    )
    assert "| test_f1 | 0.6667 |" in card and "| test_macro_f1 | 0.5000 |" in card
    assert "| test | DISEASE | 0.0000 | 0.0000 | 0.0000 | 1 | 0 | **never predicted** |" in card
    assert "| test | ANATOMY | 1.0000 | 1.0000 | 1.0000 | 1 | 1 |  |" in card
    assert "Never predicted on the held-out split, although present in it: DISEASE (test)" in card
    assert "test_support_DISEASE" not in card  # per-class keys live in their own table


def test_the_card_names_the_licence_and_links_its_terms_or_says_it_is_not_determined():
    from radmetrics.training.base_models import LICENCE_LINKS
    from radmetrics.training.export import licence_metadata, licence_note

    licence, link = next(iter(LICENCE_LINKS.items()))
    assert licence_metadata(licence, "org/base") == f"base_model: org/base\nlicense: {licence}\nlicense_link: {link}\n"
    assert licence_metadata("other", None) == "license: other\nlicense_name: unknown\n"
    assert licence_note("other", None).startswith("Licence: not determined")
    assert licence_note("apache-2.0", None) == (
        "Licence: `apache-2.0`. The training data's terms also apply to these weights (see Data provenance)."
    )
    assert f"({link}: accept them before using these weights)" in licence_note(licence, None)


def test_the_card_says_when_no_held_out_results_were_recorded():
    from radmetrics.training.export import results_section

    assert results_section({}) == "_No held-out evaluation was recorded for this run._"
    assert results_section({"test_kappa": 0.5, "note": "x"}) == (
        "| metric | value |\n|---|---|\n| test_kappa | 0.5000 |\n| note | x |"
    )
