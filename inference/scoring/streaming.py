"""Streaming, resumable scoring: the pairs are scored in fixed chunks, each chunk's per-pair values, corpus statistics
and details appended to the run's stream file (files/score_stream.py) as soon as it is scored; the summary is then
built from that file, so a killed run loses at most one chunk and memory does not grow with the pairs' scores.

The metrics are built once per process (their models load once, `Metric.loaded`) and called on each chunk in turn,
composites reading the chunk's upstream outputs as in one `Scorer` call. Corpus-level keys (BLEU-4, CheXbert F1) are
rebuilt from the per-pair statistics the file keeps (`Metric.corpus_aggregates`), so every value and interval is the
one the same pairs give in memory: the summary goes through the Scorer's own `summarize`. A metric whose per-pair
values depend on the other pairs of the call (`Metric.values_depend_on_corpus`: BERTScore with idf) is scored in one
chunk holding every pair.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..files.pair_stream import InMemoryPairs, StreamedPairs
from ..files.score_stream import StreamState, append_chunk, stream_records
from ..metrics.base import MetricOutput
from .heap import map_large_blocks, release_freed_memory
from .scorer import (
    Scorer,
    ScoreResult,
    error_counts,
    finite_or_none,
    is_empty_report,
    summarize,
    validate_context,
    validate_reports,
)

DEFAULT_CHUNK = 1000


@dataclass
class PairSource:
    """The pairs to score, in order: `pairs` gives their texts a chunk at a time (files.pair_stream: StreamedPairs
    reads them from the files, InMemoryPairs holds them), with their ids, each pair's context (or None) and the number
    of empty candidates."""

    pairs: InMemoryPairs | StreamedPairs
    ids: list[str]
    context: Sequence | None
    empty: int

    def __len__(self) -> int:
        return len(self.pairs)

    def chunk(self, start: int, stop: int) -> tuple[list, list, list[str], list | None]:
        references, candidates = self.pairs.chunk(start, stop)
        context = None if self.context is None else list(self.context[start:stop])
        return references, candidates, self.ids[start:stop], context

    def texts(self, indices: list[int]) -> tuple[list, list]:
        return self.pairs.texts(indices)

    def empty_candidates(self) -> int:
        return self.empty


def checked_source(scorer: Scorer, pairs: InMemoryPairs | StreamedPairs, context=None) -> PairSource:
    """The pairs checked as `Scorer.__call__` checks them (ScoringInputError naming the pair) before anything runs;
    streamed pairs were checked as they were indexed, but for grounded reports, which are looked for here."""
    n, grounded_ok = len(pairs), all(s.accepts_grounded for s in scorer.specs)
    ids = [str(i) for i in (pairs.ids if pairs.ids is not None else range(n))]
    if isinstance(pairs, InMemoryPairs):
        validate_reports(pairs.references, pairs.candidates, ids, grounded_ok)
        empty = sum(is_empty_report(c) for c in pairs.candidates)
    else:
        for start in range(0, n, DEFAULT_CHUNK) if pairs.grounded and not grounded_ok else ():
            validate_reports(*pairs.chunk(start, min(n, start + DEFAULT_CHUNK)), ids[start : start + DEFAULT_CHUNK])
        empty = pairs.empty
    return PairSource(pairs, ids, None if context is None else validate_context(context, ids), empty)


def memory_source(scorer: Scorer, references, candidates, ids=None, context=None) -> PairSource:
    """`checked_source` of pairs given as lists (the Python API)."""
    if len(references) != len(candidates):
        validate_reports(references, candidates)  # raises: they must pair up one to one
    return checked_source(scorer, InMemoryPairs(list(references), list(candidates), ids), context)


def chunk_size_for(metrics: list, chunk_size: int, n: int) -> int:
    """`chunk_size`, or every pair at once when a metric's values depend on the whole call."""
    return max(n, 1) if any(metric.values_depend_on_corpus() for metric in metrics) else chunk_size


def chunk_rows(specs, metrics, outputs: dict, ids: list[str], start: int) -> list[dict]:
    """One stream line per pair of a scored chunk: its values, each metric's statistics and detail."""
    rows = []
    for offset, pair_id in enumerate(ids):
        values, statistics, details = {}, {}, {}
        for spec in specs:
            out = outputs[spec.name]
            for key in spec.keys:
                v = out.per_sample[key][offset]
                values[key] = None if v is None else finite_or_none(float(v))
            if out.statistics:
                statistics[spec.name] = {name: stats[offset] for name, stats in out.statistics.items()}
            if out.details:
                details[spec.name] = out.details[offset]
        rows.append(
            {"i": start + offset, "id": pair_id, "values": values, "statistics": statistics, "details": details}
        )
    return rows


def refuse_unstreamable(metric, out: MetricOutput) -> None:
    """A metric with corpus-level keys it cannot rebuild from per-pair statistics cannot be streamed: say so."""
    missing = set(out.corpus_aggregate) - set(metric.corpus_aggregates(out.per_sample, out.statistics))
    if missing:
        raise RuntimeError(
            f"metric {metric.name} aggregates {', '.join(sorted(missing))} over the corpus without "
            "`corpus_aggregates` from per-pair statistics, so a streaming run cannot rebuild it"
        )


def score_chunks(
    scorer: Scorer,
    metrics: list,
    upstream: dict,
    source: PairSource,
    state: StreamState,
    chunk_size: int,
    report: Callable[[str], None] = lambda line: None,
) -> None:
    """Score the pairs after `state.done` chunk by chunk, appending each chunk to the stream as it is scored.
    `metrics` are `scorer.metrics()`: each chunk's outputs are put in `upstream` (`scorer.upstream`) for composites."""
    n = len(source)
    map_large_blocks()  # once, before the first chunk: freed activation blocks go back to the system within a chunk
    for start in range(state.done, n, chunk_size):
        stop = min(start + chunk_size, n)
        references, candidates, ids, context = source.chunk(start, stop)
        upstream.clear()
        for spec, metric in zip(scorer.specs, metrics):
            upstream[spec.name] = metric(references, candidates, context=context)
            if start == 0:
                refuse_unstreamable(metric, upstream[spec.name])
        meta = {name: out.meta for name, out in upstream.items() if out.meta}
        append_chunk(state, chunk_rows(scorer.specs, metrics, upstream, ids, start), stop, meta)
        upstream.clear()
        release_freed_memory()  # what the chunk freed goes back, so the next chunk's peak starts from what is live
        report(f"scored {stop} of {n} pairs")


def merge_meta(metas: list):
    """One metric's run information over its chunks: dicts merged field by field, counts summed, a value every
    chunk shares kept, anything else listed per chunk."""
    if len(metas) == 1:
        return metas[0]
    if all(isinstance(m, dict) for m in metas):
        return {
            key: merge_meta([m[key] for m in metas if key in m]) for key in dict.fromkeys(k for m in metas for k in m)
        }
    if all(isinstance(m, int) and not isinstance(m, bool) for m in metas):
        return sum(metas)
    return metas[0] if all(m == metas[0] for m in metas) else metas


class StatisticsColumns:
    """Each metric's per-pair statistics read back, stacked into one array per statistic chunk by chunk (a chunk's
    values become an array when its chunk line is read), so that 100,000 pairs' statistics are arrays, not lists."""

    def __init__(self, specs):
        self.pending: dict[str, dict[str, list]] = {spec.name: {} for spec in specs}
        self.parts: dict[str, dict[str, list]] = {spec.name: {} for spec in specs}

    def add(self, statistics: dict) -> None:
        for name, stats in statistics.items():
            for stat, value in stats.items():
                self.pending[name].setdefault(stat, []).append(value)

    def close_chunk(self) -> None:
        for name, stats in self.pending.items():
            for stat, values in stats.items():
                self.parts[name].setdefault(stat, []).append(np.asarray(values))
            self.pending[name] = {}

    def stacked(self) -> dict[str, dict[str, np.ndarray]]:
        return {name: {s: np.concatenate(p) for s, p in stats.items()} for name, stats in self.parts.items()}


def read_stream(path, specs, metrics: list) -> tuple[dict, dict, dict, dict]:
    """(per-key values as arrays with NaN where not scored, metric -> stacked statistics, metric -> error counts,
    metric -> merged meta) read back from a stream file in one pass, one line at a time."""
    values = {key: array("d") for spec in specs for key in spec.keys}
    statistics, errors, metas = StatisticsColumns(specs), {spec.name: Counter() for spec in specs}, {}
    for record in stream_records(path):
        if "chunk" in record:
            statistics.close_chunk()
            for name, meta in record["meta"].items():
                metas.setdefault(name, []).append(meta)
            continue
        for key, v in record["values"].items():
            values[key].append(float("nan") if v is None else v)
        statistics.add(record["statistics"])
        for name, detail in record["details"].items():
            errors[name].update(error_counts([detail]))
    per_key = {key: np.frombuffer(column, dtype=float) if column else np.zeros(0) for key, column in values.items()}
    stacked = statistics.stacked()
    meta = {name: merge_meta(found) for name, found in metas.items()}
    for spec, metric in zip(specs, metrics):
        rebuilt = getattr(metric, "meta_from_statistics", None)
        if rebuilt is not None and stacked[spec.name]:
            meta[spec.name] = {**meta.get(spec.name, {}), **rebuilt(stacked[spec.name])}
    return per_key, stacked, errors, meta


def result_from_stream(scorer: Scorer, metrics: list, path, empty: int) -> ScoreResult:
    """The run's ScoreResult from its stream file: the summary (values, intervals, counts, warnings) exactly as
    `Scorer.__call__` gives it for the same pairs; `per_sample` and `details` stay in the file (not held)."""
    per_key, statistics, errors, meta = read_stream(path, scorer.specs, metrics)
    outputs, directions = {}, {}
    for spec, metric in zip(scorer.specs, metrics):
        per_sample = {key: per_key[key] for key in spec.keys}
        stacked = statistics[spec.name]
        aggregates = metric.corpus_aggregates(per_sample, stacked) if len(per_key[spec.keys[0]]) else {}
        outputs[spec.name] = MetricOutput(per_sample, corpus_aggregate=aggregates, meta=meta.get(spec.name, {}))
        directions.update({key: metric.higher_is_better[key] for key in spec.keys})
    summary, warnings = summarize(scorer.specs, outputs, directions, scorer.n_bootstrap, scorer.seed, empty, errors)
    signatures = scorer.signatures(metrics)
    for key, signature in signatures.items():
        summary[key]["signature"] = signature
    return ScoreResult(
        summary,
        [],
        {},
        {spec.name: metric.reference for spec, metric in zip(scorer.specs, metrics)},
        {name: m for name, m in meta.items() if m},
        directions,
        outputs,
        warnings,
        signatures,
        scorer.first_named_key(),
    )
