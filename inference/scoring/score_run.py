"""One streaming scoring run into a folder, start to finish: what `radmetrics score` (and a benchmark or test) calls.

The folder's policy is `files.score_stream.open_stream`: a new run starts, the same run resumes after its last
complete chunk (and says from where), anything else is refused in one line unless `overwrite`. The pairs are scored
chunk by chunk into the stream (`streaming.score_chunks`), then every output is built from the stream file and
published (`files.run_output.write_streamed_result`), and the stream is marked complete.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..files.run_output import file_digests, write_streamed_result
from ..files.score_stream import StreamState, mark_complete, open_stream
from .scorer import Scorer, ScoreResult
from .streaming import PairSource, chunk_size_for, result_from_stream, score_chunks


def stream_header(scorer: Scorer, metrics: list, source: PairSource, inputs: dict, settings: dict, chunk: int) -> dict:
    """What makes two runs the same run: the signatures, the inputs' sha256, how they were read and paired, the
    number of pairs and the chunk size (chunks fix which pairs a model sees together)."""
    return {
        "signatures": scorer.signatures(metrics),
        "inputs": {role: found["sha256"] for role, found in file_digests(inputs).items()},
        "reading": settings,
        "pairs": len(source),
        "chunk_size": chunk,
    }


def describe_start(out: Path, state: StreamState, n: int, chunk: int) -> str:
    if state.resumed and state.done >= n:
        return f"{out}: every pair was scored by an earlier run ({n} pairs); writing the results"
    if state.resumed:
        return (
            f"{out}: resuming: {state.done} of {n} pairs scored in {state.chunks} complete chunk(s) of {chunk}; "
            f"scoring from pair {state.done + 1}"
        )
    return f"{out}: a new run of {n} pairs in chunks of {chunk}"


def score_into_folder(
    scorer: Scorer,
    source: PairSource,
    out: Path,
    inputs: dict[str, str],
    settings: dict,
    chunk_size: int,
    overwrite: bool = False,
    report: Callable[[str], None] = lambda line: None,
    baselines: Callable[[ScoreResult], dict | None] | None = None,
) -> tuple[ScoreResult, dict | None]:
    """Score `source` into `out` (checked by `ensure_output_dir`), resuming a run cut short; (the summary result,
    the baselines `baselines(result)` computed, or None). `report` gets one line on where the run starts and one per
    chunk."""
    metrics, upstream = scorer.metrics(), scorer.upstream  # built once: each model loads once for every chunk
    chunk = chunk_size_for(metrics, chunk_size, len(source))
    header = stream_header(scorer, metrics, source, inputs, settings, chunk)
    state = open_stream(out, header, overwrite)
    report(describe_start(out, state, len(source), chunk))
    score_chunks(scorer, metrics, upstream, source, state, chunk, report)
    result = result_from_stream(scorer, metrics, state.path, source.empty_candidates())
    found = baselines(result) if baselines else None
    write_streamed_result(result, out, state.path, source, inputs, found, {"chunk_size": chunk})
    mark_complete(state)
    return result, found
