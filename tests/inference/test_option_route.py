"""Each option is checked once, at the door, and reaches its metric typed (issue 65 item 2).

The route of `--option semantic_green.threshold=VALUE` from the CLI's option parsing to the metric's read is traced
with `sys.setprofile`: a radmetrics function is a hop when it is called with the value among its arguments (the flag's
text, or the value in a dict or list of them) and hands it on: returns it, keeps it on `self`, or passes the value
itself to another call. The route ends at the first function of the metric's own package that passes on a value it
read from `self.options` (the read). A second check, a conversion helper or a function that forwards the options
adds a hop and fails `test_an_option_passes_six_functions_from_the_cli_to_its_metric`."""

import sys
from pathlib import Path

from cli_args import score_args

from radmetrics.inference.cli import main
from radmetrics.inference.metrics.base import Metric, Option
from radmetrics.inference.scoring import registry
from radmetrics.inference.scoring.scorer import Scorer

INFERENCE = str(Path(__file__).resolve().parents[2] / "inference")
VALUE = 0.6180339887
FLAG = f"semantic_green.threshold={VALUE}"
READER = str(Path(INFERENCE) / "metrics" / "semantic_green")

# The documented route: at most six functions.
ROUTE = [
    "parse_option_flags",  # the CLI's --option text -> {metric: {option: value as YAML reads it}}
    "Scorer.__init__",  # the door: each metric is built once, here, before anything loads
    "Metric.__init__",  # the metric's constructor checks its options (and runs check_setup) once ...
    "Metric.check_options",  # ... each given option against its declaration ...
    "Option.check",  # ... the one check and conversion: the value is typed from here on
    "SemanticGreen.teacher",  # the read: self.options["threshold"] into the teacher's rules
]


def holds(obj, depth: int = 3) -> bool:
    """Whether `obj` is the traced value (or the flag's text), or holds it in dicts, lists or tuples."""
    if isinstance(obj, float):
        return obj == VALUE
    if isinstance(obj, str):
        return obj == FLAG
    if depth and isinstance(obj, dict):
        return any(holds(v, depth - 1) for v in obj.values())
    if depth and isinstance(obj, (list, tuple)):
        return any(holds(v, depth - 1) for v in obj)
    return False


def arguments(frame) -> dict:
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    names = [n for n in code.co_varnames[:count] if n not in ("self", "cls")]
    return {name: frame.f_locals.get(name) for name in names}


class RouteTracer:
    """The hops of the value, in the order their functions were called, and the read that ends the route."""

    def __init__(self):
        self.received: dict = {}  # frame -> (call order, qualified name) of the radmetrics calls given the value
        self.hops: dict = {}  # frame -> (call order, qualified name)
        self.read = None
        self.calls = 0

    def __call__(self, frame, event, arg):
        if event == "call":
            self.calls += 1
            given = arguments(frame)
            if frame.f_code.co_filename.startswith(INFERENCE) and any(holds(v) for v in given.values()):
                self.received[frame] = (self.calls, frame.f_code.co_qualname)
            caller = frame.f_back
            if caller is not None and any(isinstance(v, float) and v == VALUE for v in given.values()):
                if caller in self.received:
                    self.hops[caller] = self.received[caller]  # passes the value itself on
                elif caller.f_code.co_filename.startswith(READER):
                    self.read = caller.f_code.co_qualname
                    sys.setprofile(None)
        elif event == "return" and frame in self.received:
            owner = frame.f_locals.get("self")
            kept = owner is not None and any(holds(v) for v in getattr(owner, "__dict__", {}).values())
            if holds(arg) or kept:
                self.hops[frame] = self.received[frame]

    def route(self) -> list[str]:
        return [name for _, name in sorted(self.hops.values())] + ([self.read] if self.read else [])


def test_an_option_passes_six_functions_from_the_cli_to_its_metric(tmp_path, monkeypatch):
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "refs.txt").write_text("Small left pleural effusion.\nNo pneumothorax.\n")
    (tmp_path / "hyps.txt").write_text("Left pleural effusion.\nNo pneumothorax.\n")
    argv = score_args(str(tmp_path / "refs.txt"), str(tmp_path / "hyps.txt"), str(tmp_path / "out"))
    argv += ["--metrics", "semantic_green", "--option", FLAG, "--bootstrap", "10"]
    tracer = RouteTracer()
    sys.setprofile(tracer)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
    assert tracer.route() == ROUTE and len(ROUTE) <= 6


def test_each_option_is_checked_once_and_each_metric_built_once(monkeypatch):
    """Building a Scorer and scoring twice checks each given option once and runs each metric's check_setup once."""
    checked, setups, built = [], [], []
    check, init = Option.check, Metric.__init__

    def counting_check(self, value):
        checked.append(value)
        return check(self, value)

    def counting_init(self, *args, **kwargs):
        built.append(type(self).name)
        init(self, *args, **kwargs)

    def counting_setup(cls, options, components, endpoint):
        setups.append(cls.name)

    monkeypatch.setattr(Option, "check", counting_check)
    monkeypatch.setattr(Metric, "__init__", counting_init)
    for name in ("rougeL", "bleu2"):
        monkeypatch.setattr(registry.metrics()[name], "check_setup", classmethod(counting_setup))
    scorer = Scorer(["rougeL", "bleu2"], metric_options={"rougeL": {"use_stemmer": "false"}}, n_bootstrap=5)
    for _ in range(2):
        result = scorer(["Small left pleural effusion."], ["Left pleural effusion."])
    built_metrics = {metric.name: metric for metric in scorer.metrics()}
    assert checked == ["false"] and built_metrics["rougeL"].options["use_stemmer"] is False
    assert sorted(built) == sorted(setups) == ["bleu2", "rougeL"]
    assert result.per_sample[0]["rougeL"] is not None
