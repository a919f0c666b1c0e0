"""One base class for every metric.

A metric turns (references, candidates) into per-sample values for one or more score keys. The
aggregate of a key is the mean of its per-sample values unless the metric is corpus-level (corpus
BLEU-4, CheXbert F1), in which case it supplies `aggregate(key, indices)` computed from per-sample
sufficient statistics. Bootstrap confidence intervals resample those indices and never recompute
the metric from text.

A per-sample value of NaN means the sample could not be scored (an LLM judge that never gave a valid
answer): it is left out of the aggregate and counted as failed, never replaced by a default value.

Metrics that run an encoder (`runs_encoder`) take option `precision`: "fp32" (the default, the reference's values) or
"bf16", which runs `compute` under `torch.autocast` in bfloat16: faster on GPUs and on CPUs with bf16 instructions,
and the values change (benchmarks/README.md measures how much), so it is never the default.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_SHARED: dict = {}  # (metric class, name, inputs) -> what Metric.loaded built, kept for the process


def clear_loaded_models() -> None:
    """Release every model the metrics loaded in this process."""
    _SHARED.clear()


@dataclass
class MetricOutput:
    per_sample: dict[str, list[float]]
    details: list[dict] | None = None
    # key -> f(indices) for corpus-level aggregates; keys not listed aggregate as the mean.
    corpus_aggregate: dict[str, Callable[[np.ndarray], float]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # run information, e.g. the LLM engine's totals

    def aggregate(self, key: str, indices: np.ndarray | None = None) -> float:
        values = np.asarray(self.per_sample[key], dtype=float)
        idx = np.arange(len(values)) if indices is None else indices
        if key in self.corpus_aggregate:
            return float(self.corpus_aggregate[key](idx))
        scored = values[idx][~np.isnan(values[idx])]
        return float(np.mean(scored)) if len(scored) else float("nan")


@dataclass(frozen=True)
class Option:
    """A metric option: its default, whether a change of it can change the scores (score signatures pin those), and a
    line of help for `radmetrics score --list`."""

    default: Any = None
    changes_values: bool = True
    help: str = ""
    names_weights: bool = False  # the value names a model: a signature pins it by its checksum or commit


PRECISION = Option("fp32", True, "fp32 (the reference's values) or bf16 (autocast, faster, values change)")


class Metric:
    """One metric: everything the rest of radmetrics needs to know about it is declared here.

    Subclasses set `name`, `keys`, `higher_is_better`, `reference` (what it reproduces), `citation` (BibTeX), `options`
    ({name: Option}), and the requirements below, and implement `compute`; `display_detail` says how report.html shows
    one pair's detail. The registry discovers subclasses (`metrics/<name>/metric.py`, or a plugin's entry point in the
    `radmetrics.metrics` group) and reads the rest from the class: no other file names a metric.
    """

    name: str = ""
    keys: tuple[str, ...] = ()
    higher_is_better: dict[str, bool] = {}
    reference: str = ""
    citation: str = ""
    options: dict[str, Option] = {}  # on an instance: the given options over these defaults
    requires_components: tuple[str, ...] = ()  # component kinds that must be loaded; "a|b": either will do
    requires_extras: tuple[str, ...] = ()  # pip extras whose packages must be importable
    depends_on: tuple[str, ...] = ()  # metrics whose per-sample scores this one combines (computed first)
    judged_by_llm: bool = False  # needs an LLM endpoint (Scorer(endpoint=...), --endpoint)
    endpoint_replaces_components: bool = False  # an endpoint can stand in for the required components (GREEN)
    accepts_grounded: bool = False  # also scores grounded reports (lists of {"text", "boxes"})
    # (option, name): with the option set, the metric computes that dependency's part with a model of its own, so
    # neither the dependency metric nor the component kind of that name is needed (RadCliQ's radgraph_model)
    replaced_by_options: tuple[tuple[str, str], ...] = ()
    runs_encoder: bool = False  # an encoder forward does the work: option `precision` applies

    RUN_OPTIONS = ("endpoint", "llm_cache", "progress")  # set by the Scorer, not by users
    PRECISIONS = ("fp32", "bf16")

    def __init__(self, components: dict | None = None, upstream: dict | None = None, **options):
        declared = self.declared_options()
        unknown = sorted(set(options) - set(declared) - set(self.RUN_OPTIONS))
        if unknown:
            raise ValueError(
                f"metric {self.name} has no option {', '.join(unknown)}; its options: {', '.join(declared) or 'none'}"
            )
        if options.get("precision", "fp32") not in self.PRECISIONS:
            raise ValueError(
                f"metric {self.name} option precision={options['precision']!r}: expected one of {self.PRECISIONS}"
            )
        self.components = components or {}
        self.upstream = (
            upstream if upstream is not None else {}
        )  # MetricOutputs of metrics computed earlier in the run
        self.given_options = dict(options)
        self.options = {**{name: option.default for name, option in declared.items()}, **options}

    @classmethod
    def declared_options(cls) -> dict[str, Option]:
        """The class's options, with `precision` for metrics that run an encoder."""
        return {**cls.options, **({"precision": PRECISION} if cls.runs_encoder else {})}

    @classmethod
    def replaced(cls, options: dict | None) -> set[str]:
        return {name for option, name in cls.replaced_by_options if (options or {}).get(option)}

    @classmethod
    def dependencies(cls, options: dict | None = None) -> list[str]:
        return [d for d in cls.depends_on if d not in cls.replaced(options)]

    @classmethod
    def missing_components(cls, components, endpoint: bool = False, options: dict | None = None) -> list[str]:
        if endpoint and cls.endpoint_replaces_components:
            return []
        needed = [c for c in cls.requires_components if c not in cls.replaced(options)]
        return [c for c in needed if not any(a in components for a in c.split("|"))]

    def signature_parts(self) -> list[str]:
        """What pins this metric's values in a score signature (radmetrics.inference.signature): its components' and
        weight-naming options' fingerprints, every value-changing option at its value, and the LLM judge."""
        from ..signature import fingerprint, option_value

        parts = []
        for kind in self.requires_components:
            if kind not in self.replaced(self.options):
                parts += [f"w:{fingerprint(str(self.components[k]))}" for k in kind.split("|") if k in self.components]
        for name, option in sorted(self.declared_options().items()):
            if option.changes_values and name != "precision":
                value = self.options.get(name)
                shown = fingerprint(str(value)) if option.names_weights and value is not None else option_value(value)
                parts.append(f"{name}:{shown}")
        endpoint = self.options.get("endpoint")
        if endpoint is not None and (self.judged_by_llm or self.missing_components(self.components)):
            from ..llm.endpoint import Endpoint

            parts.append(
                f"judge:{(endpoint if isinstance(endpoint, Endpoint) else Endpoint.from_yaml(endpoint)).model}"
            )
        return parts

    def runtime_part(self) -> str | None:
        """`DEVICE-PRECISION` for a metric that runs a model here (float results differ across devices and
        precisions)."""
        if not (
            self.runs_encoder
            or any(k in self.components for kind in self.requires_components for k in kind.split("|"))
        ):
            return None
        import torch

        device = self.options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
        return f"{str(device).split(':')[0]}-{self.options.get('precision', 'fp32')}"

    @classmethod
    def display_detail(cls, detail: dict) -> dict | None:
        """What report.html shows of one pair's detail (never an error detail: the page shows those itself), as
        `display` parts: {"notes": [str], "entities": {"reference": [[text, label, matched]], "candidate": [...]},
        "tables": [{"caption", "columns", "rows"}], "texts": [{"caption", "text"}]}. The default: the detail as JSON.
        """
        from .display import json_detail

        return json_detail(detail)

    def loaded(self, name: str, build, *inputs):
        """`build()` once per process for this metric, `name` and `inputs` (everything `build` reads: component paths,
        options): a metric called again, two rewards on one component, or a reward beside a Scorer share one loaded
        model
        instead of each loading its own (RadEval loads a model once per reward)."""
        key = (type(self).__module__, type(self).__qualname__, name, repr(inputs))
        if key not in _SHARED:
            _SHARED[key] = build()
        return _SHARED[key]

    def llm_engine(self, max_reprompts: int = 0):
        """The LLM engine of an LLM-judged metric: options `endpoint` (Endpoint or YAML path) and `llm_cache`."""
        from ..llm.endpoint import Endpoint
        from ..llm.engine import LLMEngine

        endpoint = self.options.get("endpoint")
        if endpoint is None:
            raise RuntimeError(
                f"metric {self.name} is judged by an LLM: pass an endpoint (--endpoint YAML or endpoint=...)"
            )
        if not isinstance(endpoint, Endpoint):
            endpoint = Endpoint.from_yaml(endpoint)
        return LLMEngine(
            endpoint,
            self.options["llm_cache"],
            max_reprompts=max_reprompts,
            progress=self.options.get("progress", True),
        )

    def compute(self, references: Sequence[str], candidates: Sequence[str]) -> MetricOutput:
        raise NotImplementedError

    def _precision(self):
        """bfloat16 autocast for option precision="bf16", on CPU and, where there is one, on the GPU (a metric may run
        its
        model on either: BERTScore's `device` option); else nothing."""
        if self.options.get("precision", "fp32") == "fp32":
            return contextlib.nullcontext()
        import torch

        stack = contextlib.ExitStack()
        for device in ("cpu", *(("cuda",) if torch.cuda.is_available() else ())):
            stack.enter_context(torch.autocast(device, dtype=torch.bfloat16))
        return stack

    def __call__(self, references: Sequence[str], candidates: Sequence[str]) -> MetricOutput:
        with self._precision():
            out = self.compute(references, candidates)
        for key in self.keys:
            if len(out.per_sample.get(key, ())) != len(references):
                raise RuntimeError(
                    f"metric {self.name} returned {len(out.per_sample.get(key, ()))} values for {key}, expected"
                    f" {len(references)}"
                )
        return out
