"""A command or metric that needs a package from an optional extra says which, in one line (exit 2), before any
work: `train`, `rehearse`, `demo` and `data` need the train extra, `meta-eval tune-ratescore` optuna, `meta-eval
correlate` matplotlib, an HTTP endpoint the llm extra's openai client, GREEN across several processes accelerate.
Each test hides the package (whether or not it is installed) and gives the command an input it would fail on later,
so that the extra's error shows the check comes first."""

from importlib.metadata import PackageNotFoundError

import pytest

from radmetrics.inference.cli import main
from radmetrics.inference.loading import extras
from radmetrics.inference.loading.extras import MissingExtraError, extra_distributions, require, require_extra

pytestmark = pytest.mark.core


@pytest.fixture
def hide(monkeypatch):
    """hide(*names): import names (and distribution names) that the extras checks then find missing."""

    def hide_names(*names):
        installed, distribution = extras.installed, extras.distribution

        def no_distribution(name):
            if name in names:
                raise PackageNotFoundError(name)
            return distribution(name)

        monkeypatch.setattr(extras, "installed", lambda module: module not in names and installed(module))
        monkeypatch.setattr(extras, "distribution", no_distribution)

    return hide_names


def one_line(capsys, *phrases):
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error, error
    for phrase in phrases:
        assert phrase in error, error
    return error


def test_require_names_the_package_the_extra_and_the_install_command(hide):
    require("numpy", extra="train", for_what="anything")  # installed: nothing to say
    hide("optuna")
    with pytest.raises(MissingExtraError) as caught:
        require("optuna", extra="train", for_what="radmetrics meta-eval tune-ratescore")
    assert str(caught.value) == (
        "radmetrics meta-eval tune-ratescore needs the `optuna` package from the `train` extra: "
        "pip install 'radmetrics[train]'"
    )
    assert not extras.installed("no_such_package.sub")


def test_the_extras_are_read_from_the_installed_metadata(hide):
    train = extra_distributions("train")
    assert {"peft", "accelerate", "datasets", "trl", "optuna", "scikit-learn"} <= set(train)
    assert not {"cvxpy", "sentence-transformers", "sacrebleu"} & set(train)
    assert extra_distributions("llm") == ["openai"]
    with pytest.raises(ValueError, match="no extra named 'nope'"):
        extra_distributions("nope")
    hide("peft", "trl")  # where the train extra is installed, only these two are missing; in a core install, all
    with pytest.raises(MissingExtraError, match=r"radmetrics train needs the `train` extra \((peft, )?.*trl.* not"):
        require_extra("train", for_what="radmetrics train")


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "chexbert/finetune", "--config", "configs/chexbert/finetune/tiny.yaml"],
        ["rehearse", "configs/green/sft/phi2.yaml"],
        ["demo", "--out", "{tmp}/demo"],
    ],
    ids=["train", "rehearse", "demo"],
)
def test_training_commands_need_the_train_extra(tmp_path, capsys, hide, monkeypatch, argv):
    import radmetrics.training.recipes as recipes

    monkeypatch.setattr(recipes, "load_recipe", lambda name: pytest.fail("a recipe loaded before the check"))
    hide("peft")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    error = one_line(capsys, f"radmetrics {argv[0]}", "`train` extra (", "pip install 'radmetrics[train]'")
    assert "peft" in error.split("(")[-1]
    assert not (tmp_path / "demo").exists()


def test_train_list_needs_no_extra(capsys, hide):
    hide("peft", "trl", "datasets", "accelerate")
    assert main(["train", "--list"]) == 0
    assert "chexbert/finetune" in capsys.readouterr().out


def test_data_needs_datasets(tmp_path, capsys, hide):
    hide("datasets")
    assert main(["data", "corpus", "--out", str(tmp_path / "corpus")]) == 2
    one_line(capsys, "radmetrics data corpus", "`datasets` package from the `train` extra")
    assert not (tmp_path / "corpus").exists()


def test_meta_eval_subcommands_name_their_package(tmp_path, capsys, hide):
    hide("optuna", "matplotlib")
    missing = str(tmp_path / "missing.jsonl")  # read after the check: the extra is what the error names
    assert main(["meta-eval", "tune-ratescore", "--data", missing, "--out", str(tmp_path / "t")]) == 2
    one_line(capsys, "tune-ratescore", "`optuna` package from the `train` extra")
    argv = ["meta-eval", "correlate", "--csv", missing, "--human-columns", "r1", "--metrics", "rougeL"]
    assert main([*argv, "--out", str(tmp_path / "c")]) == 2
    one_line(capsys, "correlate", "`matplotlib` package from the `train` extra")
    assert not (tmp_path / "t").exists() and not (tmp_path / "c").exists()


def test_an_http_endpoint_needs_the_llm_extra_before_any_pair_is_read(tmp_path, capsys, hide):
    from radmetrics.inference.llm.endpoint import Endpoint
    from radmetrics.inference.llm.engine import LLMEngine

    hide("openai")
    endpoint = tmp_path / "endpoint.yaml"
    endpoint.write_text("name: local-vllm\nbackend: openai\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n")
    missing = str(tmp_path / "missing.txt")
    argv = ["score", "--refs", missing, "--hyps", missing, "--metrics", "fineradscore", "--endpoint", str(endpoint)]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    one_line(capsys, "the openai endpoint 'local-vllm' needs the `openai` package from the `llm` extra")
    with pytest.raises(MissingExtraError, match="`llm` extra"):
        LLMEngine(Endpoint.from_yaml(endpoint), tmp_path / "cache.sqlite")
    LLMEngine(Endpoint.from_yaml(endpoint), tmp_path / "cache.sqlite", backend=object())  # a given backend: no client
    local = Endpoint(model="a-local-dir", backend="hf", api_key_env=None)
    LLMEngine(local, tmp_path / "cache.sqlite")  # backend hf runs in process: no client either


def test_green_generates_alone_without_accelerate_and_refuses_several_processes(tmp_path, hide, monkeypatch):
    from radmetrics.inference.metrics.green.generation import process_state
    from radmetrics.inference.scoring.scorer import Scorer

    hide("accelerate")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert process_state() is None
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(MissingExtraError, match="GREEN generation across several processes needs the `accelerate`"):
        process_state()
    with pytest.raises(MissingExtraError, match="`accelerate` package from the `train` extra"):
        Scorer(["green"], components={"green": str(tmp_path / "not-loaded")})


def test_crimsons_released_model_is_placed_without_accelerate(hide, monkeypatch):
    import torch

    from radmetrics.inference.metrics.crimson.local import placement

    monkeypatch.setattr(extras, "installed", lambda module: module == "accelerate")
    assert placement() == {"device_map": "auto"}  # the reference's call
    hide("accelerate")
    assert placement() == {"device": "cuda:0" if torch.cuda.is_available() else "cpu"}
