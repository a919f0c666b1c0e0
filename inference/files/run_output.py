"""What a scoring run writes: per_sample.jsonl, summary.json, summary.md, details/, run.json (with the input files'
sha256), baselines.json and report.html. `radmetrics score`, `compare` and the demo write through it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..loading.checkpoint import sha256_file
from ..scoring.baselines import baselines_html, baselines_table
from .atomic import atomic_write, write_text
from .json_io import dumps
from .report_html import (
    REPORT_TITLE,
    compact_detail,
    sample_header,
    sample_row,
    score_report_body,
    write_score_report,
    write_streamed_page,
)
from .score_stream import pair_records


def file_digests(inputs: dict[str, str]) -> dict[str, dict]:
    """{role: {path, sha256}} of the input files, as run.json records them."""
    return {role: {"path": str(path), "sha256": sha256_file(Path(path))} for role, path in inputs.items()}


REPORT_PAIRS = 10_000  # the pairs a streamed run's report.html embeds at most: its worst on the sort key


def write_result(
    result,
    out: Path,
    references=None,
    candidates=None,
    inputs: dict[str, str] | None = None,
    baselines: dict | None = None,
) -> None:
    """per_sample.jsonl, summary.json, summary.md, details/, run.json (with the input files' sha256 when `inputs`
    names them), baselines.json (when computed), and report.html when the texts are given."""
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "per_sample.jsonl") as fh:
        for row in result.per_sample:
            fh.write(dumps(row) + "\n")
    for name, details in result.details.items():
        if details:
            with atomic_write(out / "details" / f"{name}.jsonl") as fh:
                for row, detail in zip(result.per_sample, details):
                    fh.write(dumps({"id": row["id"], **detail}) + "\n")
    write_summary_files(result, out, len(result.per_sample), inputs, baselines)
    if references is not None:
        write_score_report(
            result,
            out,
            references,
            candidates,
            baselines=baselines_html(result.summary, baselines) if baselines else "",
        )


def write_summary_files(result, out: Path, pairs: int, inputs=None, baselines=None, run_extra=None) -> None:
    """summary.json, summary.md (with the baselines' table), baselines.json and run.json."""
    write_text(out / "summary.json", dumps(result.summary, indent=2))
    table = result.table()
    if baselines:
        write_text(out / "baselines.json", dumps(baselines, indent=2))
        table += "\n\n## Baselines on the same references\n\n" + baselines_table(
            result.summary, baselines, baselines.get("rexrank")
        )
    write_text(out / "summary.md", table + "\n")
    run = {
        "references": result.references,
        "signatures": result.signatures,
        "pairs": pairs,
        **({"inputs": file_digests(inputs)} if inputs else {}),
        "meta": result.meta,
        **(run_extra or {}),
    }
    write_text(out / "run.json", dumps(run, indent=2))


def write_streamed_result(result, out: Path, stream: Path, source, inputs=None, baselines=None, run_extra=None):
    """What `write_result` writes, for a streaming run: per_sample.jsonl and details/ copied line by line from the
    stream file, the summary from `result` (`streaming.result_from_stream`), and report.html embedding at most
    `REPORT_PAIRS` pairs (the worst on the sort key, read back from the stream with their texts from `source`)."""
    with contextlib.ExitStack() as stack:
        per_sample = stack.enter_context(atomic_write(out / "per_sample.jsonl"))
        details: dict = {}
        for record in pair_records(stream):
            per_sample.write(dumps({"id": record["id"], **record["values"]}) + "\n")
            for name, detail in record["details"].items():
                if name not in details:
                    details[name] = stack.enter_context(atomic_write(out / "details" / f"{name}.jsonl"))
                details[name].write(dumps({"id": record["id"], **detail}) + "\n")
    write_summary_files(result, out, len(source), inputs, baselines, run_extra)
    write_streamed_report(result, out, stream, source, baselines_html(result.summary, baselines) if baselines else "")


def worst_pairs(result, sort_key: str, limit: int) -> list[int]:
    """The indices of at most `limit` pairs, the worst on `sort_key` first (pairs it could not score before all)."""
    owner = next(out for out in result.outputs.values() if sort_key in out.per_sample)
    values = np.asarray(owner.per_sample[sort_key], dtype=float)
    oriented = values if result.higher_is_better.get(sort_key, True) else -values
    order = np.lexsort((oriented, ~np.isnan(values)))  # not scored first, then worst, ties in file order
    return [int(i) for i in order[:limit]]


def write_streamed_report(result, out: Path, stream: Path, source, baselines: str = "", limit: int | None = None):
    """report.html of a streamed run: every pair in the summary and distributions, at most `limit` (default
    `REPORT_PAIRS`) in the pair table, so that the page stops growing with the run. The page is written a pair at a
    time (`write_streamed_page`), so the memory that builds it does not grow with the pairs it embeds either."""
    limit = REPORT_PAIRS if limit is None else limit
    keys = list(result.summary)
    sort_key = result.first_key if result.first_key in keys else keys[0]
    chosen = sorted(worst_pairs(result, sort_key, limit))  # in file order: the page sorts them worst first
    values = {key: next(o.per_sample[key] for o in result.outputs.values() if key in o.per_sample) for key in keys}
    body = score_report_body(result, values, len(chosen), baselines, sort_key)
    header = sample_header(keys, result.higher_is_better, sort_key)
    write_streamed_page(out / "report.html", REPORT_TITLE, body, header, embedded_rows(stream, source, chosen, keys))


def embedded_rows(stream: Path, source, chosen: list[int], keys: list[str], block: int = 1000) -> Iterator[dict]:
    """The page's row of each chosen pair (indices in file order), read back from the stream one pair at a time,
    their texts from `source` `block` pairs at a time."""
    wanted, pending = set(chosen), []
    for record in pair_records(stream):
        if record["i"] in wanted:
            pending.append(record)
        if len(pending) == block:
            yield from page_rows(pending, source, keys)
            pending = []
    yield from page_rows(pending, source, keys)


def page_rows(records: list[dict], source, keys: list[str]) -> Iterator[dict]:
    references, candidates = source.texts([record["i"] for record in records]) if records else ([], [])
    for record, reference, candidate in zip(records, references, candidates):
        shown = {name: compact_detail(name, detail) for name, detail in record["details"].items()}
        yield sample_row({"id": record["id"], **record["values"]}, keys, reference, candidate, shown)
