"""`Scorer`: score candidate reports against references with any set of registered metrics."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..llm.endpoint import require_client
from ..loading.cache import radmetrics_cache
from ..metrics.base import OptionError
from .registry import metrics as registered_metrics
from .registry import resolve, run_options
from .signature import version
from .stats import bootstrap_ci, bootstrap_mean_ci


class ScoringInputError(ValueError):
    pass


def finite_or_none(value) -> float | None:
    """A value for strict JSON: NaN and infinities (no value) become None, which JSON writes as null."""
    return None if value is None or not math.isfinite(value) else float(value)


class MissingComponentError(RuntimeError):
    pass


def default_llm_cache() -> Path:
    return radmetrics_cache() / "llm_answers.sqlite"


def _is_grounded(value) -> bool:
    return isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in value)


def validate_reports(
    references: Sequence, candidates: Sequence, ids: Sequence | None = None, grounded_ok: bool = False
) -> list[str]:
    """The pairs' ids as strings, or a ScoringInputError naming the pair. An empty or whitespace-only candidate is
    scored (each metric gives what its reference implementation gives for it); an empty reference is refused."""
    if len(references) != len(candidates):
        raise ScoringInputError(
            f"{len(references)} references but {len(candidates)} candidates; they must pair up one to one"
        )
    ids = [str(i) for i in (ids if ids is not None else range(len(references)))]
    if len(ids) != len(references):
        raise ScoringInputError(f"{len(ids)} ids for {len(references)} pairs")
    for i, (ref, cand) in enumerate(zip(references, candidates)):
        for side, value in (("reference", ref), ("candidate", cand)):
            if grounded_ok and _is_grounded(value):
                continue
            if not isinstance(value, str):
                kind = 'a string or a grounded report (a list of {"text", "boxes"})' if grounded_ok else "a string"
                raise ScoringInputError(f"pair {ids[i]}: the {side} is {type(value).__name__}, not {kind}")
            if side == "reference" and not value.strip():  # a defect in the data; an empty candidate is a real output
                raise ScoringInputError(f"pair {ids[i]}: the reference is empty")
    return ids


def validate_context(context: Sequence, ids: list[str]) -> list[dict | None]:
    """Each pair's context as a dict (or None), or a ScoringInputError naming the pair."""
    context = list(context)
    if len(context) != len(ids):
        raise ScoringInputError(f"{len(context)} contexts for {len(ids)} pairs; give one per pair (or None)")
    for pair_id, value in zip(ids, context):
        if value is not None and not isinstance(value, dict):
            raise ScoringInputError(f"pair {pair_id}: the context is {type(value).__name__}, not a dict of fields")
    return context


def is_empty_report(value) -> bool:
    return isinstance(value, str) and not value.strip()


def error_counts(details) -> Counter:
    """How often each error (its first 200 characters) stands in a metric's per-pair details."""
    return Counter(str(d.get("error"))[:200] for d in details or [] if isinstance(d, dict) and d.get("error"))


def failure_warning(metric: str, key: str, not_scored: int, n: int, errors: Counter | None) -> str | None:
    """A warning when `key` could not score more than half of the n pairs, naming the commonest of the metric's
    per-pair errors (`error_counts`); None otherwise. A metric that fails everywhere must not look like a result."""
    if n == 0 or not_scored <= n / 2:
        return None
    commonest = f"; commonest error ({errors.most_common(1)[0][1]}x): {errors.most_common(1)[0][0]}" if errors else ""
    return f"{metric}: {key} could not score {not_scored} of {n} pairs{commonest}"


def mean_aggregated_values(out, key: str) -> np.ndarray | None:
    """`key`'s per-pair values (NaN where not scored) when its aggregate is their mean over the scored pairs (every key
    its metric does not list in `corpus_aggregate`), for the vectorised statistics; None for a corpus-level key, which
    is recomputed on every resample."""
    if key in out.corpus_aggregate:
        return None
    return np.asarray(out.per_sample[key], dtype=float)


def key_summary(out, key: str, higher_is_better: bool, n_bootstrap: int, seed: int, empty: int) -> dict:
    """One key's summary entry from its metric's output (per-pair values, None or NaN where not scored, and its
    aggregate): the value, the 95% bootstrap interval, how many pairs it scored and did not. The Scorer and a
    streaming run (which rebuilds the output from its file) both summarise through it, so both give the same."""
    values = out.per_sample[key]
    n = len(values)
    scored = int(sum(1 for v in values if v is not None and finite_or_none(float(v)) is not None))
    means = mean_aggregated_values(out, key)
    if means is None:
        interval = bootstrap_ci(lambda idx: out.aggregate(key, idx), n, n_bootstrap, seed)
    else:
        interval = bootstrap_mean_ci(means, n_bootstrap, seed)
    return {
        "value": finite_or_none(out.aggregate(key)),
        "higher_is_better": higher_is_better,
        "ci95": [finite_or_none(v) for v in interval],
        "n": scored,
        "not_scored": n - scored,
        "empty_candidates": empty,
    }


def summarize(specs, outputs: dict, directions: dict, n_bootstrap: int, seed: int, empty: int, errors: dict):
    """(summary, warnings) of every key of `specs` from `outputs` (metric -> MetricOutput); `errors` is metric ->
    `error_counts` of its details."""
    summary, warnings = {}, []
    for spec in specs:
        out = outputs[spec.name]
        for key in spec.keys:
            summary[key] = key_summary(out, key, directions[key], n_bootstrap, seed, empty)
            not_scored, n = summary[key]["not_scored"], len(out.per_sample[key])
            warning = failure_warning(spec.name, key, not_scored, n, errors.get(spec.name))
            if warning:
                summary[key]["warning"] = warning
                warnings.append(warning)
    return summary, warnings


@dataclass
class ScoreResult:
    summary: dict[str, dict]
    per_sample: list[dict]
    details: dict[str, list[dict] | None] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)  # metric -> what it reproduces
    meta: dict[str, dict] = field(default_factory=dict)  # metric -> run information (LLM totals)
    higher_is_better: dict[str, bool] = field(default_factory=dict)  # score key -> its metric's declared direction
    outputs: dict = field(default_factory=dict, repr=False)  # metric -> MetricOutput (for `aggregate`)
    warnings: list[str] = field(default_factory=list)  # keys that could not score most pairs (`failure_warning`)
    signatures: dict[str, str] = field(default_factory=dict)  # score key -> its signature (signature.py)
    first_key: str | None = None  # the first key the user named (or the first metric's first key): report.html's sort

    def aggregate(self, key: str, indices) -> float:
        """The corpus value of `key` over the samples at `indices` (repeats allowed): how bootstrap and paired tests
        resample a metric, corpus-level ones (BLEU-4, CheXbert F1) included."""
        owner = next(name for name, out in self.outputs.items() if key in out.per_sample)
        return self.outputs[owner].aggregate(key, np.asarray(indices))

    def mean_values(self, key: str) -> np.ndarray | None:
        """`mean_aggregated_values` of `key`: its per-pair values when its aggregate is their mean, else None."""
        owner = next(name for name, out in self.outputs.items() if key in out.per_sample)
        return mean_aggregated_values(self.outputs[owner], key)

    def table(self) -> str:
        lines = ["| score | value | 95% CI | n |", "|---|---|---|---|"]
        for key, s in self.summary.items():
            if s["value"] is None:
                lines.append(f"| {key}{' (failed: see warning)' if 'warning' in s else ''} | n/a | | 0 |")
                continue
            lo, hi = s["ci95"]
            interval = "n/a" if lo is None else f"[{lo:.4f}, {hi:.4f}]"
            lines.append(
                f"| {key}{' (most pairs not scored)' if 'warning' in s else ''} | {s['value']:.4f} | {interval} |"
                f" {s['n']} |"
            )
        empty = max((s.get("empty_candidates", 0) for s in self.summary.values()), default=0)
        if empty:
            lines.append(f"\n{empty} of the candidates are empty; they are scored and counted in n.")
        if self.signatures:
            lines.append("\nSignatures (everything that changes each value):\n")
            lines.extend(f"- `{signature}`" for signature in self.signatures.values())
        lines.extend(f"\nwarning: {w}" for w in self.warnings)
        return "\n".join(lines)


def refuse_unknown_metrics(metric_options: dict) -> None:
    """OptionError, one line, for options given to a metric that is not registered or given as something other than a
    dict of option -> value. The values themselves are checked where each metric is built (`Metric.__init__`)."""
    registry = registered_metrics()
    for name, options in metric_options.items():
        if name not in registry:
            raise OptionError(f"options for an unknown metric {name!r}; known metrics: {', '.join(registry)}")
        if not isinstance(options, dict):
            raise OptionError(f"options for metric {name} must be a dict of option -> value, got {options!r}")


class Scorer:
    """Scorer(metrics=[...], components={kind: path_or_hub_id})(references, candidates).

    `metric_options` passes options to one metric, e.g. {"bertscore": {"model": "distilroberta-base"}}.
    LLM-judged metrics (FineRadScore, RadFact) need `endpoint` (an Endpoint or its YAML path); their answers
    are cached in `llm_cache` (default: $RADMETRICS_CACHE or ~/.cache/radmetrics, llm_answers.sqlite).
    A per-sample value of None is a sample that could not be scored; `n` counts the scored ones.
    """

    def __init__(
        self,
        metrics: list[str] | None = None,
        components: dict | None = None,
        metric_options: dict | None = None,
        n_bootstrap: int = 1000,
        seed: int = 0,
        endpoint=None,
        llm_cache: str | Path | None = None,
        progress: bool | None = None,
    ):
        metric_options = dict(metric_options or {})
        refuse_unknown_metrics(metric_options)
        self.specs = resolve(metrics, metric_options)
        self.named = [str(m) for m in metrics] if metrics else []  # in the user's order (specs are registry order)
        self.components = dict(components or {})
        self.n_bootstrap, self.seed = n_bootstrap, seed
        self.endpoint, self.llm_cache = endpoint, llm_cache or default_llm_cache()
        self.upstream: dict = {}  # metric -> its MetricOutput in the call under way, for the composites that read it
        # The door: each metric is built once, here, and its constructor checks each given option once (typed and
        # normalised) and runs `check_setup`; nothing loads a model before a metric runs. Options given for a metric
        # that does not run are checked all the same.
        self.built = [
            spec(
                self.components,
                self.upstream,
                **run_options(spec, endpoint, self.llm_cache, progress),
                **metric_options.get(spec.name, {}),
            )
            for spec in self.specs
        ]
        running = {spec.name for spec in self.specs}
        for name, options in metric_options.items():
            if name not in running:
                registered_metrics()[name].check_options(options)
        self.metric_options = {metric.name: metric.given_options for metric in self.built}  # checked, normalised
        self.refuse_missing_components(endpoint)

    def refuse_missing_components(self, endpoint) -> None:
        """MissingComponentError, one line, for a metric whose components (or, for an LLM judge, the endpoint) are
        not given."""
        # LLM-judged metrics without a local model of their own (CRIMSON's `crimson` component) need the endpoint
        judged = [
            s
            for s in self.specs
            if s.judged_by_llm and (not s.requires_components or s.missing_components(self.components))
        ]
        if judged and endpoint is None:
            local = [k for s in judged for k in s.requires_components]
            raise MissingComponentError(
                f"{', '.join(s.name for s in judged)} {'is' if len(judged) == 1 else 'are'} judged by an LLM: "
                "pass endpoint=... (radmetrics score --endpoint YAML)"
                + (
                    f" or a local model (--components {' '.join(f'{k}=PATH' for k in local)}, or a released one: "
                    "radmetrics weights list)"
                    if local
                    else ""
                )
            )
        if judged:
            require_client(endpoint)
        missing = {
            s.name: s.missing_components(self.components, endpoint is not None, m.options)
            for s, m in zip(self.specs, self.built)
        }
        missing = {k: v for k, v in missing.items() if v}
        if missing:
            text = "; ".join(f"{m} needs {', '.join(c)}" for m, c in missing.items())
            raise MissingComponentError(
                f"missing component checkpoints: {text} (pass components={{kind: path}} or --components DIR)"
            )

    def __call__(
        self,
        references: Sequence[str],
        candidates: Sequence[str],
        ids: Sequence | None = None,
        context: Sequence[dict | None] | None = None,
    ) -> ScoreResult:
        """`context`: each pair's patient context ({field: value}, e.g. age and indication) for the metrics that take
        one (CRIMSON); the others ignore it."""
        ids = validate_reports(references, candidates, ids, grounded_ok=all(s.accepts_grounded for s in self.specs))
        if context is not None:
            context = validate_context(context, ids)
        outputs, docs, directions = self.upstream, {}, {}
        outputs.clear()
        empty = sum(is_empty_report(c) for c in candidates)
        metrics = self.metrics()
        signatures = self.signatures(metrics)
        for spec, metric in zip(self.specs, metrics):
            outputs[spec.name] = metric(list(references), list(candidates), context=context)
            docs[spec.name] = metric.reference
            directions.update({key: metric.higher_is_better[key] for key in spec.keys})
        outputs = dict(outputs)  # the result keeps this call's outputs; the next call refills `upstream`
        self.upstream.clear()
        rows = [{"id": i} for i in ids]
        for spec in self.specs:
            for key in spec.keys:
                for row, v in zip(rows, outputs[spec.name].per_sample[key]):
                    row[key] = None if v is None else finite_or_none(float(v))
        errors = {name: error_counts(o.details) for name, o in outputs.items()}
        summary, warnings = summarize(self.specs, outputs, directions, self.n_bootstrap, self.seed, empty, errors)
        for key, signature in signatures.items():
            summary[key]["signature"] = signature
        return ScoreResult(
            summary,
            rows,
            {name: o.details for name, o in outputs.items()},
            docs,
            {name: o.meta for name, o in outputs.items() if o.meta},
            directions,
            outputs,
            warnings,
            signatures,
            self.first_named_key(),
        )

    def first_named_key(self) -> str | None:
        """The first score key the user named: a key itself, or the first key of the metric named first."""
        if not self.named:
            return None
        first = self.named[0]
        for spec in self.specs:
            if first == spec.name:
                return spec.keys[0]
            if first in spec.keys:
                return first
        return None

    def metrics(self) -> list:
        """The metric instances of this Scorer, built once when it was (no model is loaded until they run); they read
        the outputs of the metrics before them from `self.upstream`."""
        return self.built

    def signatures(self, metrics: list | None = None) -> dict[str, str]:
        """Score key -> its signature (scoring/signature.py): the key, what pins its metric's values (a
        composite's dependencies' parts prefixed with their names), the device and precision, radmetrics' version."""
        metrics = metrics if metrics is not None else self.metrics()
        by_name = dict(zip((spec.name for spec in self.specs), metrics))
        signatures = {}
        for spec, metric in zip(self.specs, metrics):
            parts = metric.signature_parts()
            for dependency in spec.dependencies(metric.options):
                parts += [f"{dependency}.{part}" for part in by_name[dependency].signature_parts()]
            runtimes = {
                m.runtime_part() for m in (metric, *(by_name[d] for d in spec.dependencies(metric.options)))
            } - {None}
            tail = [*sorted(runtimes), f"v:{version()}"]
            signatures.update({key: "|".join([key, *parts, *tail]) for key in spec.keys})
        return signatures
