"""A run's output_dir: the same run resumes and says what changed; another run is refused in one line."""

from __future__ import annotations

import pytest

from radmetrics.training.common.resume_policy import RunMismatchError, check_same_run
from radmetrics.training.common.run_dir import write_run_manifest

IDENTITY = {"component": "rate_ner_iob", "recipe": "rate_ner/iob", "base_model": "tiny-bert"}
DATA = {"silver_dir": "out/silver", "max_train_samples": 3000, "splits": ("train", "validation")}


def started(tmp_path, **training):
    config = {**DATA, "label_all_subwords": False, "training": {"max_steps": 20, "output_dir": str(tmp_path)}}
    config["training"].update(training)
    write_run_manifest(
        tmp_path,
        component="rate_ner_iob",
        recipe="rate_ner/iob",
        base_model="tiny-bert",
        config=config,
        data_provenance={},
    )
    return config


def test_a_new_folder_is_a_new_run(tmp_path):
    assert check_same_run(tmp_path / "fresh", IDENTITY, DATA, {}) == []


def test_the_same_run_resumes_and_names_what_changed(tmp_path):
    config = started(tmp_path)
    assert check_same_run(tmp_path, IDENTITY, DATA, config) == []  # a tuple stored as a JSON list is the same value
    longer = {**config, "training": {**config["training"], "max_steps": 90, "output_dir": "elsewhere"}}
    assert check_same_run(tmp_path, IDENTITY, DATA, longer) == ["training.max_steps: 20 -> 90"]


@pytest.mark.parametrize(
    "identity, data, named",
    [
        ({**IDENTITY, "recipe": "rate_ner/span"}, DATA, "recipe 'rate_ner/iob' -> 'rate_ner/span'"),
        ({**IDENTITY, "base_model": "MiniLM"}, DATA, "base_model 'tiny-bert' -> 'MiniLM'"),
        (IDENTITY, {**DATA, "silver_dir": "theirs/silver"}, "silver_dir 'out/silver' -> 'theirs/silver'"),
    ],
)
def test_another_run_is_refused_in_one_line(tmp_path, identity, data, named):
    started(tmp_path)
    with pytest.raises(RunMismatchError, match="holds another run") as caught:
        check_same_run(tmp_path, identity, data, {})
    assert named in str(caught.value) and "\n" not in str(caught.value)


def test_the_train_command_refuses_another_run_before_any_model_loads(tmp_path, capsys, monkeypatch):
    from radmetrics.inference.cli import main

    started(tmp_path / "run")
    import transformers

    monkeypatch.setattr(transformers.AutoModelForTokenClassification, "from_pretrained", _no_model)
    monkeypatch.setattr(transformers.AutoModelForTokenClassification, "from_config", _no_model)
    argv = [
        "train",
        "rate_ner/span",
        "--config",
        "configs/rate_ner/span/tiny.yaml",
        "--output_dir",
        str(tmp_path / "run"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds another run" in err and "recipe 'rate_ner/iob' -> 'rate_ner/span'" in err


def _no_model(*args, **kwargs):
    raise AssertionError("a model loaded before the output_dir was checked")
