"""One owner per metric: a metric is its class, discovered; nothing else in radmetrics names it.

A toy metric in a temporary package, installed only as a `radmetrics.metrics` entry point, appears in `score --list`,
`Scorer`, its `evaluate` module and report.html, with no radmetrics file edited."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from cli_args import score_args

from radmetrics.inference.metrics.base import OptionError
from radmetrics.inference.scoring import registry
from radmetrics.inference.scoring.scorer import Scorer

REPO = Path(__file__).resolve().parents[2]

TOY_METRIC = '''
from radmetrics.inference.metrics.base import Metric, MetricOutput, Option, OptionError


class ToyLength(Metric):
    """The candidate's word count over the reference's."""

    name = "toy_length"
    keys = ("toy_length_ratio",)
    higher_is_better = {"toy_length_ratio": True}
    reference = "a toy: word count ratio"
    citation = "@misc{toy, title={A toy metric}}"
    options = {"scale": Option(1.0, True, "multiplies the ratio", type=float, minimum=0)}

    @classmethod
    def check_setup(cls, options, components, endpoint):
        if options["scale"] > 100:
            raise OptionError("metric toy_length option scale: at most 100 with these components")

    def compute(self, references, candidates):
        ratios = [self.options["scale"] * len(c.split()) / len(r.split()) for r, c in zip(references, candidates)]
        return MetricOutput({"toy_length_ratio": ratios}, details=[{"words": len(c.split())} for c in candidates])

    @classmethod
    def display_detail(cls, detail):
        return {"notes": [f"toy words: {detail['words']}"]}
'''


@pytest.fixture
def toy_plugin(tmp_path, monkeypatch):
    root = tmp_path / "site"
    (root / "toy_plugin").mkdir(parents=True)
    (root / "toy_plugin" / "__init__.py").write_text("")
    (root / "toy_plugin" / "metric.py").write_text(TOY_METRIC)
    info = root / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[radmetrics.metrics]\ntoy_length = toy_plugin.metric:ToyLength\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    registry.refresh()
    yield root
    registry.refresh()


def cli(args, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "radmetrics.inference.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_a_plugin_metric_appears_everywhere(toy_plugin, tmp_path):
    listed = cli(["score", "--list"], toy_plugin, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "toy_length: toy_length_ratio" in listed.stdout and "--option toy_length.scale=1.0" in listed.stdout

    refs, hyps = ["a b c d", "a b"], ["a b", "a b c d"]
    with pytest.raises(OptionError, match="at most 100"):  # Metric, Option and OptionError keep their import path
        Scorer(["toy_length_ratio"], metric_options={"toy_length": {"scale": 1000}})
    result = Scorer(["toy_length_ratio"], metric_options={"toy_length": {"scale": 2.0}}, n_bootstrap=0)(refs, hyps)
    assert [row["toy_length_ratio"] for row in result.per_sample] == [1.0, 4.0]

    evaluate = pytest.importorskip("evaluate")
    from radmetrics.inference.scoring.evaluate_modules import module_path

    module = evaluate.load(module_path("toy_length"))
    assert module.compute(predictions=hyps, references=refs) == {"toy_length_ratio": pytest.approx(1.25)}
    assert module.citation == "@misc{toy, title={A toy metric}}"

    (tmp_path / "refs.txt").write_text("\n".join(refs) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(hyps) + "\n")
    scored = cli(
        score_args(*"refs.txt hyps.txt out --metrics toy_length --bootstrap 10".split()),
        toy_plugin,
        tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert data["keys"] == ["toy_length_ratio"] and data["rows"][0]["details"]["toy_length"] == {
        "notes": ["toy words: 2"]
    }


def test_pages_and_modules_name_no_metric():
    names = set(registry.metrics()) | {key for cls in registry.metrics().values() for key in cls.keys}
    for path in ("inference/files/report_html.py", "inference/scoring/evaluate_modules.py"):
        text = (REPO / path).read_text()
        named = sorted(name for name in names if re.search(rf"\b{re.escape(name)}\b", text))
        assert not named, f"{path} names the metric(s) {named}: declare what it needs on the metric class"


def test_every_python_folder_ships_as_a_package():
    """setuptools installs only the packages it is given; setup.py finds them (no hand-kept list in pyproject.toml,
    which would override them), so a new metric folder ships without a line anywhere."""
    import runpy

    shipped = set(runpy.run_path(str(REPO / "setup.py"), run_name="radmetrics_setup")["packages"]())
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config, "pyproject.toml lists packages by hand again: setup.py finds them"
    for package, folder in config["package-dir"].items():
        for directory in [REPO / folder, *(p for p in (REPO / folder).rglob("*") if p.is_dir())]:
            if "__pycache__" in directory.parts or not any(directory.glob("*.py")):
                continue
            name = ".".join([package, *directory.relative_to(REPO / folder).parts])
            assert name in shipped, f"{directory.relative_to(REPO)} holds Python but setuptools would not ship {name}"
    assert "radmetrics.inference.metrics.semantic_green" in shipped and "radmetrics.inference.resources" in shipped


def test_every_metric_declares_what_the_rest_reads():
    for name, cls in registry.metrics().items():
        assert cls.keys and set(cls.higher_is_better) == set(cls.keys), name
        assert cls.reference and cls.citation.startswith("@"), name
        for option in cls.declared_options().values():
            assert option.help, f"{name}: every option says what it does"
