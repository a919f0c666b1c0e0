"""Write pairs + programmatic annotations as JSONL and HF datasets, with a dataset card."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from radmetrics.inference.files import atomic

from ..corpus.corpus_io import write_split_records
from ..corpus.leakage import overlap_card_section, split_overlap
from .builders import PairRecord
from .programmatic_teacher import programmatic_annotation


def reference_texts_by_split(pairs: list[PairRecord]) -> dict[str, list[str]]:
    """The text of each distinct reference report, per split (a report is the reference of several pairs)."""
    references = {p.reference_id: (p.split, p.reference) for p in pairs}
    by_split: dict[str, list[str]] = {}
    for split, text in references.values():
        by_split.setdefault(split, []).append(text)
    return by_split


def pair_statistics(pairs: list[PairRecord]) -> dict:
    edits = [e for p in pairs for e in p.edits if e.category is not None]
    return {
        "pairs": len(pairs),
        "per_heuristic": dict(Counter(p.heuristic for p in pairs)),
        "per_split": dict(Counter(p.split for p in pairs)),
        "per_heuristic_and_split": {
            h: dict(Counter(p.split for p in pairs if p.heuristic == h)) for h in sorted({p.heuristic for p in pairs})
        },
        "errors_per_category": {
            f"{c}_{'requested' if s is None else 'significant' if s else 'insignificant'}": n
            for (c, s), n in sorted(Counter((e.category, e.significant) for e in edits).items(), key=str)
        },
        "edit_kinds": dict(Counter(e.kind for p in pairs for e in p.edits)),
        "split_overlap": split_overlap(reference_texts_by_split(pairs)),
    }


def render_card(stats: dict, provenance: dict) -> str:
    semantic = provenance.get("teacher") == "semantic"
    teacher_title = "semantic-teacher" if semantic else "programmatic"
    teacher_text = (
        "a GREEN-format annotation by the semantic teacher (semantic_green: sentence matching and word rules on "
        "the two texts; the edit log is kept but not used), whose error counts are in each record's `counts`; "
        "the edit statistics below describe the edits, not the annotations."
        if semantic
        else "a GREEN-format annotation written from that log by the programmatic teacher."
    )
    rows = "\n".join(
        f"| {h} | {n} | {stats['per_heuristic_and_split'][h]} |" for h, n in stats["per_heuristic"].items()
    )
    cats = "\n".join(f"| {k} | {v} |" for k, v in stats["errors_per_category"].items())
    return f"""---
tags: [radiology, radmetrics, green]
---
# radmetrics report pairs with {teacher_title} GREEN annotations

Reference/candidate pairs built by `radmetrics data pairs` (GREEN section 3.1.1 heuristics) with a complete
edit log per pair, and {teacher_text}

Provenance: `{json.dumps(provenance)}`

## Pairs per heuristic

| heuristic | pairs | per split |
|---|---|---|
{rows}

Splits are assigned by reference report (donor reports come from the same split). The table below counts the
reference reports of each split.

{overlap_card_section(stats["split_overlap"])}
## Errors per GREEN category

| category | edits |
|---|---|
{cats}
"""


def pairs_teacher(out_dir: str | Path) -> str:
    """The teacher that annotated the pairs in `out_dir`, from their card's provenance (cards written before it was
    recorded are programmatic)."""
    match = re.search(r'"teacher": "(\w+)"', (Path(out_dir) / "README.md").read_text(encoding="utf-8"))
    return match.group(1) if match else "programmatic"


def pairs_explanation(out_dir: str | Path) -> str:
    """The teacher explanation pairs in `out_dir` were written with, from their card's provenance (write_pairs records
    it; cards written before it did are summary)."""
    match = re.search(r'"teacher_explanation": "(\w+)"', (Path(out_dir) / "README.md").read_text(encoding="utf-8"))
    return match.group(1) if match else "summary"


TEACHERS = ("programmatic", "semantic")


def pairs_units(out_dir: str | Path) -> str:
    """What the semantic teacher judged in `out_dir`'s pairs (findings or statements), from their card's provenance
    (cards written before it was recorded are statements)."""
    match = re.search(r'"teacher_units": "(\w+)"', (Path(out_dir) / "README.md").read_text(encoding="utf-8"))
    return match.group(1) if match else "statements"


def annotate_pair_records(
    pairs: list[PairRecord], teacher: str = "programmatic", explanation: str = "summary", units: str = "findings"
) -> list[dict]:
    """Each pair's annotation record by `teacher` (see `write_pairs`)."""
    if teacher not in TEACHERS:
        raise ValueError(f"teacher {teacher!r}: expected one of {', '.join(TEACHERS)}")
    if teacher == "semantic":
        from .semantic_teacher import semantic_annotations

        # a walkthrough names numbered statements (the `numbered` prompt shows them); a summary quotes them instead
        return semantic_annotations(
            [p.to_dict() for p in pairs], quoted=explanation == "summary", explanation=explanation, units=units
        )
    return [programmatic_annotation(p, explanation) for p in pairs]


def teacher_provenance(provenance: dict, teacher: str, explanation: str, units: str) -> dict:
    """The card's provenance with the teacher's settings, which `pairs_teacher` and friends read back."""
    provenance = {**provenance, "teacher": teacher, "teacher_explanation": explanation}
    if teacher == "semantic":
        provenance["teacher_units"] = units
    return provenance


def publish_pairs(annotated: list[dict], pairs: list[PairRecord], out_dir: str | Path, provenance: dict) -> dict:
    """Write the annotated records of `pairs` per split, the statistics and the dataset card; the statistics."""
    out = Path(out_dir)
    by_split: dict[str, list[dict]] = {}
    for record in annotated:
        by_split.setdefault(record["split"], []).append(record)
    write_split_records(by_split, out)
    stats = pair_statistics(pairs)
    atomic.write_text(out / "stats.json", json.dumps(stats, indent=2))
    atomic.write_text(out / "README.md", render_card(stats, provenance))
    return stats


def write_pairs(
    pairs: list[PairRecord],
    out_dir: str | Path,
    provenance: dict,
    explanation: str = "summary",
    teacher: str = "programmatic",
    units: str = "findings",
) -> dict:
    """Annotate `pairs` and write each split, the statistics and a dataset card. `teacher`: "programmatic" (the edit
    log; `explanation`: teacher.EXPLANATIONS) or "semantic" (the semantic_green teacher, which reads only the two
    texts: a walkthrough names numbered items, a summary quotes them; `units`: the findings the extractor lists, or
    every statement). `radmetrics data pairs` does the same in resumable chunks (pairs_run.py)."""
    annotated = annotate_pair_records(pairs, teacher, explanation, units)
    return publish_pairs(annotated, pairs, out_dir, teacher_provenance(provenance, teacher, explanation, units))
