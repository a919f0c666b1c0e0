"""`Scorer`: score candidate reports against references with any set of registered metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .registry import resolve
from .stats import bootstrap_ci


class ScoringInputError(ValueError):
    pass


class MissingComponentError(RuntimeError):
    pass


def validate_reports(references: Sequence, candidates: Sequence, ids: Sequence | None = None) -> list[str]:
    if len(references) != len(candidates):
        raise ScoringInputError(f"{len(references)} references but {len(candidates)} candidates; they must pair up one to one")
    ids = [str(i) for i in (ids if ids is not None else range(len(references)))]
    if len(ids) != len(references):
        raise ScoringInputError(f"{len(ids)} ids for {len(references)} pairs")
    for i, (ref, cand) in enumerate(zip(references, candidates)):
        for side, value in (("reference", ref), ("candidate", cand)):
            if not isinstance(value, str):
                raise ScoringInputError(f"pair {ids[i]}: the {side} is {type(value).__name__}, not a string")
    return ids


@dataclass
class ScoreResult:
    summary: dict[str, dict]
    per_sample: list[dict]
    details: dict[str, list[dict] | None] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)  # metric -> what it reproduces

    def table(self) -> str:
        lines = ["| score | value | 95% CI | n |", "|---|---|---|---|"]
        for key, s in self.summary.items():
            lo, hi = s["ci95"]
            lines.append(f"| {key} | {s['value']:.4f} | [{lo:.4f}, {hi:.4f}] | {s['n']} |")
        return "\n".join(lines)


class Scorer:
    """Scorer(metrics=[...], components={kind: path_or_hub_id})(references, candidates).

    `metric_options` passes options to one metric, e.g. {"bertscore": {"model": "distilroberta-base"}}.
    """

    def __init__(self, metrics: list[str] | None = None, components: dict | None = None,
                 metric_options: dict | None = None, n_bootstrap: int = 1000, seed: int = 0):
        self.specs = resolve(metrics)
        self.components = dict(components or {})
        self.metric_options = metric_options or {}
        self.n_bootstrap, self.seed = n_bootstrap, seed
        missing = {s.name: s.missing_components(self.components) for s in self.specs}
        missing = {k: v for k, v in missing.items() if v}
        if missing:
            text = "; ".join(f"{m} needs {', '.join(c)}" for m, c in missing.items())
            raise MissingComponentError(f"missing component checkpoints: {text} (pass components={{kind: path}} or --components DIR)")

    def __call__(self, references: Sequence[str], candidates: Sequence[str], ids: Sequence | None = None) -> ScoreResult:
        ids = validate_reports(references, candidates, ids)
        outputs, docs = {}, {}
        for spec in self.specs:
            metric = spec.load()(components=self.components, upstream=outputs, **self.metric_options.get(spec.name, {}))
            outputs[spec.name] = metric(list(references), list(candidates))
            docs[spec.name] = metric.reference
        summary, rows = {}, [{"id": i} for i in ids]
        for spec in self.specs:
            out = outputs[spec.name]
            for key in spec.keys:
                values = out.per_sample[key]
                for row, v in zip(rows, values):
                    row[key] = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
                n = len(values)
                summary[key] = {
                    "value": out.aggregate(key),
                    "ci95": list(bootstrap_ci(lambda idx, k=key, o=out: o.aggregate(k, idx), n, self.n_bootstrap, self.seed)),
                    "n": n,
                }
        return ScoreResult(summary, rows, {name: o.details for name, o in outputs.items()}, docs)
