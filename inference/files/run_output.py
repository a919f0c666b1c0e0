"""What a scoring run writes: per_sample.jsonl, summary.json, summary.md, details/, run.json (with the input files'
sha256), baselines.json and report.html. `radmetrics score`, `compare` and the demo write through it."""

from __future__ import annotations

from pathlib import Path

from ..loading.checkpoint import sha256_file
from ..scoring.baselines import baselines_html, baselines_table
from .json_io import dumps
from .report_html import write_score_report


def file_digests(inputs: dict[str, str]) -> dict[str, dict]:
    """{role: {path, sha256}} of the input files, as run.json records them."""
    return {role: {"path": str(path), "sha256": sha256_file(Path(path))} for role, path in inputs.items()}


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
    with open(out / "per_sample.jsonl", "w", encoding="utf-8") as fh:
        for row in result.per_sample:
            fh.write(dumps(row) + "\n")
    (out / "summary.json").write_text(dumps(result.summary, indent=2), encoding="utf-8")
    table = result.table()
    if baselines:
        (out / "baselines.json").write_text(dumps(baselines, indent=2), encoding="utf-8")
        table += "\n\n## Baselines on the same references\n\n" + baselines_table(
            result.summary, baselines, baselines.get("rexrank")
        )
    (out / "summary.md").write_text(table + "\n", encoding="utf-8")
    for name, details in result.details.items():
        if details:
            (out / "details").mkdir(exist_ok=True)
            with open(out / "details" / f"{name}.jsonl", "w", encoding="utf-8") as fh:
                for row, detail in zip(result.per_sample, details):
                    fh.write(dumps({"id": row["id"], **detail}) + "\n")
    run = {
        "references": result.references,
        "signatures": result.signatures,
        "pairs": len(result.per_sample),
        **({"inputs": file_digests(inputs)} if inputs else {}),
        "meta": result.meta,
    }
    (out / "run.json").write_text(dumps(run, indent=2), encoding="utf-8")
    if references is not None:
        write_score_report(
            result,
            out,
            references,
            candidates,
            baselines=baselines_html(result.summary, baselines) if baselines else "",
        )
