"""Every radmetrics metric as a Hugging Face `evaluate` module, offline.

    import evaluate
    from radmetrics.inference.evaluate_modules import module_path

    metric = evaluate.load(module_path(NAME), components={KIND: PATH})  # NAME: any of `radmetrics score --list`
    metric.compute(predictions=generated, references=references)       # {key: value}: the Scorer's values

`module_path(name)` writes the module once under RADMETRICS_CACHE (default ~/.cache/radmetrics) and returns its
folder; `write_evaluate_modules(DIR)` writes all of them, each in the layout of a Hub Space (`NAME/NAME.py`, a
`README.md` metric card, `requirements.txt`), ready to push. `evaluate.load` of a local folder works without the Hub.

What the module computes is `Scorer([name], components, {name: options})(references, predictions)`: the same values,
summary by summary (`bootstrap` > 0 adds `<key>_ci95`). Components, options and an LLM endpoint are given to `load`
(kept for every `compute`, models loaded once per module) or to `compute` (that call only). Features: predictions and
references are strings; an empty prediction is scored, as everywhere in radmetrics.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..files import atomic
from ..loading.cache import radmetrics_cache
from ..loading.extras import require
from .registry import metrics
from .scorer import Scorer

SCRIPT = '''"""radmetrics `{name}` as an `evaluate` module (written by radmetrics.inference.evaluate_modules)."""

from radmetrics.inference.evaluate_modules import evaluate_module_class

RadmetricsMetric = evaluate_module_class("{name}")
'''


def _metric(name: str):
    registry = metrics()
    if name not in registry:
        raise ValueError(f"no radmetrics metric {name!r}; metrics: {', '.join(registry)}")
    return registry[name]


def _description(name: str) -> str:
    spec = _metric(name)
    needs = (
        f" Needs the component(s) {', '.join(spec.requires_components)} (`components={{kind: path}}`)."
        if spec.requires_components
        else ""
    )
    llm = " Judged by an LLM: pass `endpoint` (an endpoint YAML, see configs/llm/)." if spec.judged_by_llm else ""
    return (
        f"radmetrics `{name}`: score keys {', '.join(spec.keys)}, the values `radmetrics score --metrics {name}` gives"
        f" (each key's reference implementation is named in the radmetrics README).{needs}{llm}"
    )


def evaluate_module_class(name: str):
    """The `evaluate.Metric` subclass that computes radmetrics metric `name` through the Scorer."""
    for package in ("evaluate", "datasets"):
        require(package, extra="train", for_what=f"radmetrics' evaluate module {name!r}")
    import datasets
    import evaluate

    spec = _metric(name)

    class RadmetricsMetric(evaluate.Metric):
        def __init__(
            self, *args, components: dict | None = None, options: dict | None = None, endpoint=None, **kwargs
        ):
            super().__init__(*args, **kwargs)
            self.components, self.options, self.endpoint = dict(components or {}), dict(options or {}), endpoint
            self._scorers: dict = {}

        def _info(self):
            return evaluate.MetricInfo(
                description=_description(name),
                citation=spec.citation,
                inputs_description=(
                    "predictions: generated reports (str); references: reference reports (str). Optional compute "
                    "arguments: components, options, endpoint, bootstrap (resamples for a 95% interval, 0 = none)."
                ),
                features=datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
                ),
                reference_urls=["https://github.com/radmetrics/radmetrics"],
            )

        def _compute(
            self,
            predictions,
            references,
            components: dict | None = None,
            options: dict | None = None,
            endpoint=None,
            bootstrap: int = 0,
        ):
            components = {**self.components, **(components or {})}
            options = {**self.options, **(options or {})}
            endpoint = endpoint if endpoint is not None else self.endpoint
            key = (tuple(sorted(components.items())), repr(sorted(options.items())), repr(endpoint), bootstrap)
            if key not in self._scorers:  # one Scorer per setting: its metric instances keep their models loaded
                self._scorers[key] = Scorer(
                    [name], components, {name: options}, n_bootstrap=bootstrap, endpoint=endpoint
                )
            result = self._scorers[key](list(references), list(predictions))
            values = {k: result.summary[k]["value"] for k in spec.keys}
            if bootstrap:
                values.update({f"{k}_ci95": result.summary[k]["ci95"] for k in spec.keys})
            return values

    RadmetricsMetric.__name__ = RadmetricsMetric.__qualname__ = f"Radmetrics_{name}"
    return RadmetricsMetric


def metric_card(name: str) -> str:
    spec = _metric(name)
    needed = [kind.split("|")[0] for kind in spec.requires_components]
    load_arguments = ", components={" + ", ".join(f'"{k}": "exports/{k}"' for k in needed) + "}" if needed else ""
    if spec.judged_by_llm:
        load_arguments += ', endpoint="configs/llm/openai_gpt4o.yaml"'
    return f"""---
title: radmetrics {name}
tags:
- evaluate
- metric
- radiology
description: "{_description(name).replace('"', "'")}"
---

# radmetrics `{name}`

{_description(name)}

```python
import evaluate
from radmetrics.inference.evaluate_modules import module_path

# by path: this folder, module_path (the copy radmetrics writes), or the Hub Space it is pushed to as "<user>/<space>";
# a bare evaluate.load("{name}") would load the Hub's own metric of that name, if there is one
metric = evaluate.load(module_path("{name}"){load_arguments})
metric.compute(predictions=["No acute findings."], references=["No acute cardiopulmonary process."])
```

Returns {", ".join(f"`{k}`" for k in spec.keys)} (with `bootstrap=N`, each key's 95% interval as `<key>_ci95`).

## Citation

```bibtex
{spec.citation}
```
"""


def write_evaluate_module(name: str, out_dir: str | os.PathLike) -> Path:
    """`out_dir/name/` holding `name.py`, a README metric card and requirements.txt (a Hub Space's layout)."""
    _metric(name)
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    atomic.write_text(folder / f"{name}.py", SCRIPT.format(name=name))
    atomic.write_text(folder / "README.md", metric_card(name))
    atomic.write_text(folder / "requirements.txt", "radmetrics[train]\n")
    return folder


def write_evaluate_modules(out_dir: str | os.PathLike) -> list[Path]:
    return [write_evaluate_module(name, out_dir) for name in metrics()]


def module_path(name: str) -> str:
    """The folder of metric `name`'s evaluate module under the radmetrics cache, written when missing or outdated."""
    folder = radmetrics_cache() / "evaluate" / name
    if not (folder / f"{name}.py").is_file() or (folder / f"{name}.py").read_text(encoding="utf-8") != SCRIPT.format(
        name=name
    ):
        write_evaluate_module(name, folder.parent)
    return str(folder)
