"""The one policy for an existing --out folder (files/score_stream.py), as `radmetrics compare` applies it.

A comparison is scored in one call and written whole, so it has nothing to resume: a folder holding a comparison's
outputs (a finished run) or a `radmetrics score` run is refused in one line before anything is scored, unless
`overwrite`, which removes them first (not an LLM answer cache: answers paid for are kept)."""

from __future__ import annotations

from pathlib import Path

from .output_paths import OutputPathError
from .score_stream import OTHER_OUTPUTS, RESULT_FILES, STREAM_NAME, remove_results

COMPARE_OUTPUTS = ("compare.json", "compare.md", "report.html", "per_sample_a.jsonl", "per_sample_b.jsonl")


def claim_compare_folder(out: Path, overwrite: bool = False) -> None:
    """Refuse `out` (checked by `ensure_output_dir`) when it holds another run's outputs, unless `overwrite`."""
    found = [name for name in (STREAM_NAME, *RESULT_FILES, *COMPARE_OUTPUTS, *OTHER_OUTPUTS) if (out / name).exists()]
    if found and not overwrite:
        raise OutputPathError(
            f"--out {out} holds the outputs of another run ({found[0]}): pass --overwrite to replace them, or "
            "choose another --out"
        )
    if overwrite:
        remove_results(out)
        for name in COMPARE_OUTPUTS:
            (out / name).unlink(missing_ok=True)
