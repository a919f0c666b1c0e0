"""The metric registry: metric name -> implementation (imported lazily), its score keys and requirements.

Only metrics implemented in this version are registered; `radmetrics score --list` shows them with their
references. A name given by the user may be a metric name or one of its score keys.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    name: str
    target: str  # "module:Class"
    keys: tuple[str, ...]
    requires_components: tuple[str, ...] = ()  # "a|b": either component will do
    depends_on: tuple[str, ...] = ()  # other metrics whose per-sample scores this one combines
    judged_by_llm: bool = False  # needs an LLM endpoint (Scorer(endpoint=...), --endpoint)
    endpoint_replaces_components: bool = False  # an endpoint can stand in for the required components (GREEN)
    accepts_grounded: bool = False  # also scores grounded reports (lists of {"text", "boxes"})
    # (option, name): with the option set, the metric computes that dependency's part with a model of its own, so
    # neither the dependency metric nor the component kind of that name is needed (RadCliQ's radgraph_model)
    replaced_by_options: tuple[tuple[str, str], ...] = ()

    def replaced(self, options: dict | None) -> set[str]:
        return {name for option, name in self.replaced_by_options if (options or {}).get(option)}

    def dependencies(self, options: dict | None = None) -> list[str]:
        return [d for d in self.depends_on if d not in self.replaced(options)]

    def missing_components(self, components, endpoint: bool = False, options: dict | None = None) -> list[str]:
        if endpoint and self.endpoint_replaces_components:
            return []
        needed = [c for c in self.requires_components if c not in self.replaced(options)]
        return [c for c in needed if not any(a in components for a in c.split("|"))]

    def load(self):
        module, cls = self.target.split(":")
        return getattr(importlib.import_module(module), cls)


_M = "radmetrics.inference.metrics"
REGISTRY: dict[str, MetricSpec] = {
    s.name: s
    for s in (
        MetricSpec("bleu2", f"{_M}.lexical:Bleu2RadCliQ", ("bleu2",)),
        MetricSpec("bleu4", f"{_M}.lexical:Bleu4Corpus", ("bleu4",)),
        MetricSpec("rougeL", f"{_M}.lexical:RougeL", ("rougeL",)),
        MetricSpec("bertscore", f"{_M}.bertscore.metric:BertScore", ("bertscore",)),
        MetricSpec("chexbert", f"{_M}.chexbert.metric:CheXbert",
                   (*(f"chexbert_f1_{n}_{k}" for n in (14, 5) for k in ("micro", "macro", "weighted")), "chexbert_similarity"),
                   requires_components=("chexbert",)),
        MetricSpec("radgraph", f"{_M}.radgraph.metric:RadGraph",
                   ("radgraph_simple", "radgraph_partial", "radgraph_complete", "radgraph_radcliq"), requires_components=("radgraph",)),
        MetricSpec("ratescore", f"{_M}.ratescore.metric:RaTEScore", ("ratescore",), requires_components=("rate_ner|rate_ner_iob|rate_ner_span",)),
        MetricSpec("radcliq", f"{_M}.radcliq.metric:RadCliQ", ("radcliq_v0", "radcliq_v1"), requires_components=("radgraph", "chexbert"),
                   depends_on=("radgraph", "bertscore", "chexbert", "bleu2"),
                   replaced_by_options=(("radgraph_model", "radgraph"), ("bertscore_model", "bertscore"))),
        MetricSpec("green", f"{_M}.green.metric:Green",
                   ("green", "green_significant_errors", "green_insignificant_errors", "green_matched_findings"),
                   requires_components=("green",), endpoint_replaces_components=True),
        MetricSpec("fineradscore", f"{_M}.fineradscore.metric:FineRadScore", ("fineradscore_sum", "fineradscore_max"), judged_by_llm=True),
        MetricSpec("radfact", f"{_M}.radfact.metric:RadFact",
                   tuple(f"radfact_{k}_{p}" for k in ("logical", "grounding", "spatial") for p in ("precision", "recall", "f1")),
                   judged_by_llm=True, accepts_grounded=True),
    )
}


def available_metrics(components, endpoint: bool = False) -> list[str]:
    """Names of the metrics whose required components are all in `components` (LLM-judged ones with an endpoint)."""
    return [s.name for s in REGISTRY.values() if not s.missing_components(components, endpoint) and (endpoint or not s.judged_by_llm)]


class UnknownMetricError(ValueError):
    pass


def key_owner() -> dict[str, str]:
    return {key: spec.name for spec in REGISTRY.values() for key in spec.keys}


def resolve(names: list[str] | None, metric_options: dict | None = None) -> list[MetricSpec]:
    """Metric or score-key names -> specs in registry order (dependencies included, less those that a metric's
    options replace). None = every metric."""
    if not names:
        return list(REGISTRY.values())
    owners = key_owner()
    wanted: set[str] = set()
    for name in names:
        if name in REGISTRY:
            wanted.add(name)
        elif name in owners:
            wanted.add(owners[name])
        else:
            known = sorted(set(REGISTRY) | set(owners))
            raise UnknownMetricError(f"unknown metric {name!r}; known metrics and score keys: {', '.join(known)}")
    pending = list(wanted)
    while pending:
        name = pending.pop()
        for dep in REGISTRY[name].dependencies((metric_options or {}).get(name)):
            if dep not in wanted:
                wanted.add(dep)
                pending.append(dep)
    return [spec for name, spec in REGISTRY.items() if name in wanted]
