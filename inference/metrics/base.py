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
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..llm.endpoint import Endpoint
from ..llm.engine import LLMEngine
from ..loading.fingerprints import fingerprint, option_value
from .display import json_detail

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
    # name -> one JSON-able value per pair: the sufficient statistics the corpus-level keys aggregate (BLEU-4's n-gram
    # counts, CheXbert's labels), kept by streaming runs so that `Metric.corpus_aggregates` rebuilds the aggregates
    statistics: dict[str, list] = field(default_factory=dict)

    def aggregate(self, key: str, indices: np.ndarray | None = None) -> float:
        values = np.asarray(self.per_sample[key], dtype=float)
        idx = np.arange(len(values)) if indices is None else indices
        if key in self.corpus_aggregate:
            return float(self.corpus_aggregate[key](idx))
        scored = values[idx][~np.isnan(values[idx])]
        return float(np.mean(scored)) if len(scored) else float("nan")


class OptionError(ValueError):
    """A metric option that the metric does not have, or a value it does not allow: one line naming the metric, the
    option, the value and what is allowed. Raised when a Scorer is built, before any model or file loads."""


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class Option:
    """A metric option: its default, whether a change of it can change the scores (score signatures pin those), a line
    of help for `radmetrics score --list`, and what values it allows.

    `type` is bool, int, float or str; `choices` lists a str option's allowed values; `minimum` and `maximum` bound a
    number (inclusive); `file` lets a str option name an existing file (alone, or beside its `choices`); a default of
    None means "the metric's own choice", and None is then allowed. `check(value)` returns the value normalised ("true"
    -> True, "0.50" -> 0.5, "FP32" -> "fp32"), which is what enters the signature, or raises OptionError."""

    default: Any = None
    changes_values: bool = True
    help: str = ""
    names_weights: bool = False  # the value names a model: a signature pins it by its checksum or commit
    type: type | None = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    file: bool = False

    def allowed(self) -> str:
        """What the option allows, in words: `expected ...`."""
        kind = self.kind()
        if kind is bool:
            text = "true or false"
        elif self.choices:
            text = "one of " + ", ".join(self.choices) + (" or an existing file" if self.file else "")
        elif self.file:
            text = "an existing file"
        elif kind in (int, float):
            noun = "an integer" if kind is int else "a number"
            if self.minimum is not None and self.maximum is not None:
                text = f"{noun} in [{_number(self.minimum)}, {_number(self.maximum)}]"
            elif self.minimum is not None:
                text = f"{noun} >= {_number(self.minimum)}"
            elif self.maximum is not None:
                text = f"{noun} <= {_number(self.maximum)}"
            else:
                text = noun
        elif kind is str:
            text = "a non-empty text"
        else:
            text = "any value"
        return text + (" (or leave it unset)" if self.default is None else "")

    def kind(self) -> type | None:
        """The declared type; for an option declared without one (a plugin written before types), its default's."""
        if self.type is not None:
            return self.type
        return type(self.default) if type(self.default) in _TYPES else None

    def check(self, value: Any) -> Any:
        """The value normalised, or OptionError(what is allowed) without the metric's and option's names. An option
        with no type, declared or implied by its default, takes any value as it is. The one check of an option
        (`Metric.__init__`, through `check_options`): the metric reads the value it returns, typed, and converts
        nothing again (tests/inference/test_option_route.py counts the checks and the functions a value passes)."""
        kind = self.kind()
        if kind is None:
            return value
        if kind not in _TYPES:
            raise OptionError(f"is declared with type {kind!r}, not bool, int, float or str")
        if value is None:
            if self.default is None:
                return None
            raise OptionError(f"expected {self.allowed()}")
        # `value` as `kind`, or None where it is not one: a bool is neither an int nor a float here, a float with a
        # fraction is not an int, and text is read as the type it names ("true", "3", "0.50")
        converted = None
        if kind is bool:
            if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
                converted = bool(value)
            elif isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
                converted = value.strip().lower() in _TRUE
        elif kind is str:
            converted = str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
        elif not isinstance(value, bool):
            number = value
            if isinstance(value, str):
                with contextlib.suppress(ValueError):
                    number = float(value.strip())
            if isinstance(number, (int, float)) and math.isfinite(number):
                if kind is float:
                    converted = float(number)
                elif float(number).is_integer():
                    converted = int(number)
        if converted is None:
            raise OptionError(f"expected {self.allowed()}")
        # inside the declared range or choices: a str choice in its declared case, a file's path expanded
        if kind in (int, float):
            if (self.minimum is not None and converted < self.minimum) or (
                self.maximum is not None and converted > self.maximum
            ):
                raise OptionError(f"expected {self.allowed()}")
            return converted
        if kind is str:
            if not converted.strip():
                raise OptionError(f"expected {self.allowed()}")
            by_folded = {choice.lower(): choice for choice in self.choices}
            if converted.lower() in by_folded:
                return by_folded[converted.lower()]
            if self.file and Path(converted).expanduser().is_file():
                return str(Path(converted).expanduser())
            if self.choices or self.file:
                raise OptionError(f"expected {self.allowed()}")
        return converted


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


PRECISION = Option(
    "fp32",
    True,
    "fp32 (the reference's values) or bf16 (autocast, faster, values change)",
    type=str,
    choices=("fp32", "bf16"),
)


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
    # compute(references, candidates, context=...) takes each pair's patient context ({field: value}; CRIMSON)
    accepts_context: bool = False

    RUN_OPTIONS = ("endpoint", "llm_cache", "progress")  # set by the Scorer, not by users

    def __init__(self, components: dict | None = None, upstream: dict | None = None, **options):
        """Built once per run, by the Scorer at its door (or by hand): each given option is checked here, once, and
        stored typed in `self.options`; `check_setup` runs here. Nothing loads a model before `compute`."""
        options = self.check_options(options)
        declared = self.declared_options()
        self.components = components or {}
        self.upstream = (
            upstream if upstream is not None else {}
        )  # MetricOutputs of metrics computed earlier in the run
        self.given_options = dict(options)
        self.options = {**{name: option.default for name, option in declared.items()}, **options}
        type(self).check_setup(self.options, self.components, self.options.get("endpoint"))

    @classmethod
    def declared_options(cls) -> dict[str, Option]:
        """The class's options, with `precision` for metrics that run an encoder."""
        return {**cls.options, **({"precision": PRECISION} if cls.runs_encoder else {})}

    @classmethod
    def check_options(cls, options: dict | None) -> dict:
        """The given options, each checked against its declaration and normalised; OptionError (one line naming the
        metric, the option, the value and what is allowed) for an option the metric lacks or a value it refuses."""
        declared = cls.declared_options()
        given = dict(options or {})
        unknown = sorted(set(given) - set(declared) - set(cls.RUN_OPTIONS))
        if unknown:
            raise OptionError(
                f"metric {cls.name} has no option {', '.join(unknown)}; its options: {', '.join(declared) or 'none'}"
            )
        checked = {}
        for name, value in given.items():
            if name in cls.RUN_OPTIONS:
                checked[name] = value
                continue
            try:
                checked[name] = declared[name].check(value)
            except OptionError as exc:
                shown = "(empty)" if value is None or value == "" else repr(value)
                raise OptionError(f"metric {cls.name} option {name}={shown}: {exc}") from None
        return checked

    @classmethod
    def check_setup(cls, options: dict, components: dict, endpoint) -> None:
        """Checks that need more than one option (options with their defaults filled in, the components, the endpoint)
        and no model: raise OptionError. The metric's constructor calls it, when the Scorer builds it, before anything
        loads."""

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
        """What pins this metric's values in a score signature (scoring/signature.py): its components' and
        weight-naming options' fingerprints, every value-changing option at its value, and the LLM judge."""
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
            parts.append(
                f"judge:{(endpoint if isinstance(endpoint, Endpoint) else Endpoint.from_yaml(endpoint)).model}"
            )
        return parts

    def upstream_values(self, key: str) -> list:
        """The per-sample values of score key `key` from the metrics computed before this one in the run (what a
        composite combines), read from their outputs without asking the registry which metric owns the key."""
        for output in self.upstream.values():
            if key in output.per_sample:
                return output.per_sample[key]
        raise KeyError(f"metric {self.name} combines {key}, which no metric computed before it gave")

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
        return json_detail(detail)

    def loaded(self, name: str, build, *inputs):
        """`build()` once per process for this metric, `name` and `inputs` (everything `build` reads: component paths,
        options): a metric called again, two rewards on one component, or a reward beside a Scorer share one loaded
        model instead of each loading its own (RadEval loads a model once per reward)."""
        key = (type(self).__module__, type(self).__qualname__, name, repr(inputs))
        if key not in _SHARED:
            _SHARED[key] = build()
        return _SHARED[key]

    def llm_engine(self, max_reprompts: int = 0):
        """The LLM engine of an LLM-judged metric: options `endpoint` (Endpoint or YAML path) and `llm_cache`."""
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

    def corpus_aggregates(self, per_sample: dict[str, np.ndarray], statistics: dict[str, np.ndarray]) -> dict:
        """{key: f(indices)} for the corpus-level keys, rebuilt from every pair's values and `MetricOutput.statistics`
        (stacked over the pairs): how a streaming run, which keeps those per pair on disk, gets the same corpus value
        and intervals. A metric that sets `corpus_aggregate` builds it with this method, so both paths agree."""
        return {}

    def values_depend_on_corpus(self) -> bool:
        """True when one pair's values depend on the other pairs of the call (BERTScore's idf weights from the call's
        references): a streaming run then scores every pair in one chunk so that the values stay those of one call."""
        return False

    def _precision(self):
        """bfloat16 autocast for option precision="bf16", on CPU and, where there is one, on the GPU (a metric may run
        its model on either: BERTScore's `device` option); else nothing."""
        if self.options.get("precision", "fp32") == "fp32":
            return contextlib.nullcontext()
        import torch

        stack = contextlib.ExitStack()
        for device in ("cpu", *(("cuda",) if torch.cuda.is_available() else ())):
            stack.enter_context(torch.autocast(device, dtype=torch.bfloat16))
        return stack

    def __call__(
        self, references: Sequence[str], candidates: Sequence[str], context: Sequence[dict] | None = None
    ) -> MetricOutput:
        with self._precision():
            if self.accepts_context:
                out = self.compute(references, candidates, context=context)
            else:
                out = self.compute(references, candidates)
        for key in self.keys:
            if len(out.per_sample.get(key, ())) != len(references):
                raise RuntimeError(
                    f"metric {self.name} returned {len(out.per_sample.get(key, ()))} values for {key}, expected"
                    f" {len(references)}"
                )
        return out
