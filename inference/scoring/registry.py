"""The metric registry: every metric class, discovered, by name.

Nothing here lists a metric. The registry finds
- radmetrics' own metrics: each `Metric` subclass defined in `radmetrics.inference.metrics.<name>.metric` (or in a
  module directly under `metrics/`, such as `lexical.py`);
- plugins: classes named by entry points of the `radmetrics.metrics` group of any installed distribution, e.g. in a
  plugin's pyproject.toml: `[project.entry-points."radmetrics.metrics"] my_metric = "my_package.metric:MyMetric"`.

Everything else (keys, components, dependencies, options, citation, how its detail is shown) is read from the class.
Metrics are ordered text-only first, then encoder metrics, composites, and LLM-generated ones, by name within each
tier, with every dependency before the metric that combines it. A name given by the user may be a metric name or one
of its score keys.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import lru_cache
from importlib.metadata import entry_points

from ..metrics.base import Metric

ENTRY_POINT_GROUP = "radmetrics.metrics"
_BUILTIN = "radmetrics.inference.metrics"
_NOT_METRICS = {"base", "display"}  # modules of the metrics package that define no metric


class UnknownMetricError(ValueError):
    pass


def _classes_in(module) -> list[type[Metric]]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Metric) and value.__module__ == module.__name__ and value.name
    ]


def _builtin_classes() -> list[type[Metric]]:
    package = importlib.import_module(_BUILTIN)
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in _NOT_METRICS:
            continue
        name = f"{_BUILTIN}.{info.name}.metric" if info.ispkg else f"{_BUILTIN}.{info.name}"
        if info.ispkg and importlib.util.find_spec(name) is None:
            continue
        found.extend(_classes_in(importlib.import_module(name)))
    return found


def _plugin_classes() -> list[type[Metric]]:
    found = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        cls = entry.load()
        if not (isinstance(cls, type) and issubclass(cls, Metric) and cls.name):
            raise TypeError(
                f"entry point {entry.name} = {entry.value} ({ENTRY_POINT_GROUP}) is not a named Metric subclass"
            )
        found.append(cls)
    return found


def tier(cls: type[Metric]) -> int:
    """0 text only, 1 an encoder or other component, 2 a composite of other metrics, 3 an LLM writes the answer."""
    if cls.judged_by_llm or cls.endpoint_replaces_components:
        return 3
    if cls.depends_on:
        return 2
    return 1 if cls.runs_encoder or cls.requires_components else 0


def _ordered(classes: list[type[Metric]]) -> dict[str, type[Metric]]:
    by_name: dict[str, type[Metric]] = {}
    for cls in classes:
        if cls.name in by_name and by_name[cls.name] is not cls:
            raise ValueError(
                f"two metrics are named {cls.name!r}: {by_name[cls.name].__module__} and {cls.__module__}"
            )
        by_name[cls.name] = cls
    ordered: dict[str, type[Metric]] = {}

    def place(cls, path=()):
        if cls.name in ordered:
            return
        if cls.name in path:
            raise ValueError(f"metrics depend on each other in a circle: {' -> '.join((*path, cls.name))}")
        for dependency in cls.depends_on:
            if dependency not in by_name:
                raise ValueError(f"metric {cls.name} depends on {dependency!r}, which no metric is named")
            place(by_name[dependency], (*path, cls.name))
        ordered[cls.name] = cls

    for cls in sorted(by_name.values(), key=lambda c: (tier(c), c.name.lower())):
        place(cls)
    return ordered


@lru_cache(maxsize=1)
def _registry() -> dict[str, type[Metric]]:
    return _ordered(_builtin_classes() + _plugin_classes())


def metrics() -> dict[str, type[Metric]]:
    """Metric name -> class, in the registry's order. `refresh()` after installing a plugin in a running process."""
    return _registry()


def refresh() -> None:
    _registry.cache_clear()


def __getattr__(name: str):
    if name == "REGISTRY":  # the discovered metrics, read at first use
        return metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def available_metrics(components, endpoint: bool = False) -> list[str]:
    """Names of the metrics whose required components are all in `components` (LLM-judged ones with an endpoint)."""
    return [
        name
        for name, cls in metrics().items()
        if not cls.missing_components(components, endpoint) and (endpoint or not cls.judged_by_llm)
    ]


def key_owner() -> dict[str, str]:
    return {key: cls.name for cls in metrics().values() for key in cls.keys}


def resolve(names: list[str] | None, metric_options: dict | None = None) -> list[type[Metric]]:
    """Metric or score-key names -> metric classes in registry order (dependencies included, less those that a metric's
    options replace). None = every metric."""
    registry = metrics()
    if not names:
        return list(registry.values())
    owners = key_owner()
    wanted: set[str] = set()
    for name in names:
        if name in registry:
            wanted.add(name)
        elif name in owners:
            wanted.add(owners[name])
        else:
            known = sorted(set(registry) | set(owners))
            raise UnknownMetricError(f"unknown metric {name!r}; known metrics and score keys: {', '.join(known)}")
    pending = list(wanted)
    while pending:
        name = pending.pop()
        for dep in registry[name].dependencies((metric_options or {}).get(name)):
            if dep not in wanted:
                wanted.add(dep)
                pending.append(dep)
    return [cls for name, cls in registry.items() if name in wanted]


def run_options(cls: type[Metric], endpoint=None, llm_cache=None, progress: bool | None = None) -> dict:
    """The options a run gives a metric beside the user's (`Metric.RUN_OPTIONS`): an LLM-judged metric (or one an
    endpoint can serve) gets the endpoint and the answer cache; `progress` (None: the metric's default) shows or hides
    progress bars."""
    options = {}
    if cls.judged_by_llm or cls.endpoint_replaces_components:
        options = {"endpoint": endpoint, "llm_cache": llm_cache}
    if progress is not None:
        options["progress"] = progress
    return options
