"""One `radmetrics data inject-errors` run: LLM-written candidates with sampled GREEN error categories (appendix A.4,
llm_teacher.py) for a corpus' reports, written as the split files of `data annotate` with failures.jsonl and
llm_manifest.json. The endpoint's answers are cached, so a rerun re-sends nothing answered."""

from __future__ import annotations

from pathlib import Path

from radmetrics.inference.files.output_paths import ensure_output_dir

from ..corpus.selection import CorpusChoice
from .annotation_run import write_annotations
from .pair_annotators import LLMAnnotator


def inject_into_folder(
    corpus: CorpusChoice,
    out_dir: str,
    endpoint: str,
    llm_cache: str | None,
    max_reprompts: int,
    limit: int | None,
    max_errors: int,
) -> dict:
    """Write the injected pairs into `out_dir`; the summary the command prints."""
    from .llm_teacher import inject_errors

    out = ensure_output_dir(out_dir, what="--out")
    teacher = LLMAnnotator(endpoint, Path(llm_cache) if llm_cache else out / "llm_cache.sqlite", max_reprompts, "")
    reports = corpus.reports()[:limit]
    pairs, failures = inject_errors(reports, _splits(corpus, reports), teacher.engine, corpus.seed, max_errors)
    records = [p.to_dict() for p in pairs]
    per_file = write_annotations(records, out, None)
    return teacher.finish(out, records, failures, per_file)


def _splits(corpus: CorpusChoice, reports: list) -> dict:
    from ..corpus.corpus_io import assign_splits

    return assign_splits(reports, corpus.split_by, seed=corpus.seed)
