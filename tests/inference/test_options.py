"""Typed metric options, checked at the door: every option of every metric declares its type, a bad value is one line
naming the metric, the option, the value and what is allowed, raised when the Scorer is built (before any model or
input file loads), and values are normalised before they enter a signature."""

import subprocess
import sys

import pytest

from radmetrics.inference.cli import main
from radmetrics.inference.metrics.base import Option, OptionError
from radmetrics.inference.scoring.registry import metrics
from radmetrics.inference.scoring.scorer import Scorer

MISSING = "no-such-dir/refs.txt"  # the option is refused before this file is looked for


def test_every_option_of_every_metric_is_typed():
    undeclared = []
    for name, cls in metrics().items():
        for option_name, option in cls.declared_options().items():
            if option.type not in (bool, int, float, str):
                undeclared.append(f"{name}.{option_name}")
                continue
            assert option.check(option.default) == option.default, f"{name}.{option_name}'s default fails its check"
            assert not option.choices or option.type is str, f"{name}.{option_name}: choices on a non-str option"
            assert option.default is None or not option.choices or option.default in option.choices
    assert not undeclared, f"options declared without a type: {undeclared}"


def test_an_option_without_a_type_takes_its_defaults_type():
    """A plugin's option declared without a type (the contract before types) is checked by its default's type."""
    assert Option(1, True, "untyped").check("3") == 3
    with pytest.raises(OptionError, match="an integer"):
        Option(1, True, "untyped").check("abc")
    assert Option(None, True, "untyped").check([1, 2]) == [1, 2]


@pytest.mark.parametrize(
    ("value", "kind", "extra", "expected"),
    [
        ("true", bool, {}, True),
        ("False", bool, {}, False),
        (1, bool, {}, True),
        ("0.50", float, {}, 0.5),
        (1, float, {}, 1.0),
        ("3", int, {}, 3),
        (4.0, int, {}, 4),
        ("FP32", str, {"choices": ("fp32", "bf16")}, "fp32"),
        (123, str, {}, "123"),
    ],
)
def test_values_are_normalised(value, kind, extra, expected):
    checked = Option(expected, True, "", type=kind, **extra).check(value)
    assert checked == expected and type(checked) is type(expected)


@pytest.mark.parametrize(
    ("value", "option", "allowed"),
    [
        ("maybe", Option(True, type=bool), "true or false"),
        (2, Option(True, type=bool), "true or false"),
        ("abc", Option(0.5, type=float, minimum=0, maximum=1), r"a number in \[0, 1\]"),
        (2, Option(0.5, type=float, minimum=0, maximum=1), r"a number in \[0, 1\]"),
        (float("nan"), Option(0.5, type=float), "a number"),
        (True, Option(8, type=int, minimum=1), "an integer >= 1"),
        (0, Option(8, type=int, minimum=1), "an integer >= 1"),
        (2.5, Option(8, type=int, minimum=1), "an integer >= 1"),
        (None, Option(8, type=int, minimum=1), "an integer >= 1"),
        ("fp16", Option("fp32", type=str, choices=("fp32", "bf16")), "one of fp32, bf16"),
        ("", Option("x", type=str), "a non-empty text"),
        ("missing.json", Option("long", type=str, choices=("long", "short"), file=True), "or an existing file"),
        ([1], Option("x", type=str), "a non-empty text"),
    ],
)
def test_bad_values_name_what_is_allowed(value, option, allowed):
    with pytest.raises(OptionError, match=allowed):
        option.check(value)


def test_none_is_the_metrics_own_choice_only_where_the_default_is_none():
    assert Option(None, type=int).check(None) is None
    assert Option(None, type=str, choices=("iob", "span")).check("SPAN") == "span"


def test_a_file_option_takes_an_existing_file(tmp_path):
    matrix = tmp_path / "matrix.json"
    matrix.write_text("{}")
    option = Option("long", type=str, choices=("long", "short"), file=True)
    assert option.check(str(matrix)) == str(matrix) and option.check("short") == "short"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["rougeL.nonexistent=1"], "metric rougeL has no option nonexistent; its options: use_stemmer"),
        (
            ["semantic_green.threshold=abc"],
            r"metric semantic_green option threshold='abc': expected a number in \[0, 1\]",
        ),
        (["semantic_green.threshold="], r"metric semantic_green option threshold=\(empty\): expected a number"),
        (["semantic_green.threshold=2"], r"option threshold=2: expected a number in \[0, 1\]"),
        (["semantic_green.precision=fp16"], "option precision='fp16': expected one of fp32, bf16"),
        (["semantic_green.batch_size=0"], "option batch_size=0: expected an integer >= 1"),
        (["rougeL.use_stemmer=maybe"], "option use_stemmer='maybe': expected true or false"),
        (["nosuchmetric.x=1"], "unknown metric 'nosuchmetric'"),
        (["rougeL=1"], "is not METRIC.KEY=VALUE"),
        (["ratescore.matrix=missing.json"], "expected one of long, short or an existing file"),
        (["radcliq.radgraph_base_model=x", "--metrics", "radcliq"], "set radgraph_model too"),
        (["radcliq.precision=bf16", "--metrics", "radcliq"], "applies to its own models"),
        (["green.engine=fast"], "option engine='fast': expected one of generate, continuous"),
    ],
)
def test_each_bad_option_is_one_line_and_exit_2_before_any_file_loads(tmp_path, capsys, options, message):
    args = ["score", "--refs", MISSING, "--hyps", MISSING, "--out", str(tmp_path / "out")]
    option, *more = options
    code = main([*args, "--option", option, *more])
    error = capsys.readouterr().err
    assert code == 2
    assert len(error.strip().splitlines()) == 1, error
    assert pytest.importorskip("re").search(message, error), error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("flag", "replacement"),
    [
        ("--bertscore-model", "--option bertscore.model=VALUE"),
        ("--radcliq-constants", "--option radcliq.constants=VALUE"),
        ("--ratescore-matrix", "--option ratescore.matrix=VALUE"),
    ],
)
def test_removed_metric_flags_name_their_option(tmp_path, capsys, flag, replacement):
    code = main(["score", "--refs", MISSING, "--hyps", MISSING, flag, "x", "--out", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert code == 2 and len(error.strip().splitlines()) == 1 and replacement in error, error


def test_signature_only_refuses_a_bad_value(capsys):
    code = main(
        ["score", "--signature-only", "--metrics", "semantic_green", "--option", "semantic_green.threshold=abc"]
    )
    captured = capsys.readouterr()
    assert code == 2 and "threshold:abc" not in captured.out
    assert "expected a number" in captured.err


def test_green_engine_with_an_endpoint_is_refused_when_the_scorer_is_built(tmp_path):
    with pytest.raises(OptionError, match="with an endpoint the server generates"):
        Scorer(["green"], metric_options={"green": {"engine": "continuous"}}, endpoint=str(tmp_path / "e.yaml"))


def test_equal_values_give_equal_signatures():
    def signature(metric, options):
        return next(iter(Scorer([metric], metric_options={metric: options}).signatures().values()))

    assert signature("rougeL", {"use_stemmer": "true"}) == signature("rougeL", {"use_stemmer": True})
    assert "use_stemmer:False" in signature("rougeL", {"use_stemmer": "no"})
    assert signature("semantic_green", {"threshold": "0.50"}) == signature("semantic_green", {"threshold": 0.5})
    assert "threshold:0.5|" in signature("semantic_green", {"threshold": "0.50"})


def test_the_python_api_checks_options_when_the_scorer_is_built():
    with pytest.raises(OptionError, match="metric semantic_green option threshold='abc'"):
        Scorer(["semantic_green"], metric_options={"semantic_green": {"threshold": "abc"}})
    with pytest.raises(OptionError, match="unknown metric 'rouge'"):
        Scorer(["rougeL"], metric_options={"rouge": {"use_stemmer": True}})


def test_the_console_script_prints_no_traceback(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "radmetrics.inference.cli",
            "score",
            "--refs",
            MISSING,
            "--hyps",
            MISSING,
            "--option",
            "semantic_green.threshold=abc",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "radmetrics score: error: metric semantic_green option threshold='abc': expected a number in [0, 1]"
    ]


def test_text_options_take_the_text_as_typed_and_files_are_expanded(tmp_path, monkeypatch):
    from radmetrics.inference.scoring.option_flags import parse_option_flags

    flags = ["bertscore.model=0123", "semantic_green.threshold=0.50"]
    assert parse_option_flags(flags) == {"bertscore": {"model": "0123"}, "semantic_green": {"threshold": 0.5}}
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "m.json").write_text("{}")
    option = Option("long", type=str, choices=("long", "short"), file=True)
    assert option.check("~/m.json") == str(tmp_path / "m.json")
