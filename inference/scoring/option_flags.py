"""`--option METRIC.KEY=VALUE` flags to the Scorer's metric options: each value read as YAML (true, 3, x), except
for a text option, which takes the text as typed; the metric then checks and normalises it."""

from __future__ import annotations

from ..metrics.base import OptionError
from . import registry


def parse_option_flags(items: list[str], trust_remote_code: bool = False) -> dict:
    """{metric: {option: value}} of the flags; `trust_remote_code` sets that option on every metric that has it.
    OptionError (one line) for a flag that is not METRIC.KEY=VALUE or names an unknown metric."""
    import yaml

    options: dict = {}
    if trust_remote_code:
        for name, spec in registry.metrics().items():
            if "trust_remote_code" in spec.declared_options():
                options[name] = {"trust_remote_code": True}
    for item in items:
        name, equals, value = item.partition("=")
        metric, dot, key = name.partition(".")
        if not (metric and key and dot and equals):
            raise OptionError(f"--option {item!r} is not METRIC.KEY=VALUE (e.g. --option rougeL.use_stemmer=false)")
        if metric not in registry.metrics():
            raise OptionError(f"--option {item!r}: unknown metric {metric!r}; `radmetrics score --list` names them")
        declared = registry.metrics()[metric].declared_options().get(key)
        if declared is not None and declared.kind() is str:
            parsed = value  # a text option takes the text as typed (YAML would read "0123" or "no" as other values)
        else:
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError:
                parsed = value  # not YAML: the text as it is, which the metric's option checks
        options.setdefault(metric, {})[key] = parsed
    return options
