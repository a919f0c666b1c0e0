"""Run directories: step-named checkpoints with a completion marker, the run manifest, resume.

Layout (open-instruct style): RUN_DIR/radmetrics_run.json, RUN_DIR/checkpoint-<step>/ and RUN_DIR/final/.
A checkpoint counts only once its `.complete` marker exists; the marker is written after everything
else, so a crash during a save leaves a checkpoint that resume and export both skip.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from radmetrics.inference.files import atomic
from radmetrics.inference.loading.components import get_component

RUN_MANIFEST = "radmetrics_run.json"
COMPLETE_MARKER = ".complete"
EVAL_RESULTS = "eval_results.json"
_STEP_DIR = re.compile(r"^checkpoint-(\d+)$")


class RunDirError(RuntimeError):
    pass


def mark_complete(directory: str | Path) -> None:
    atomic.write_text(Path(directory) / COMPLETE_MARKER, time.strftime("%Y-%m-%dT%H:%M:%S"))


def is_complete(directory: str | Path) -> bool:
    return (Path(directory) / COMPLETE_MARKER).is_file()


def complete_checkpoints(run_dir: str | Path) -> list[Path]:
    """Complete step checkpoints, oldest first."""
    run_dir = Path(run_dir)
    steps = []
    for child in run_dir.iterdir() if run_dir.is_dir() else []:
        match = _STEP_DIR.match(child.name)
        if match and child.is_dir() and is_complete(child):
            steps.append((int(match.group(1)), child))
    return [p for _, p in sorted(steps)]


def last_complete_checkpoint(run_dir: str | Path) -> Path | None:
    """What training resumes from: the newest complete checkpoint-<step>, or None."""
    found = complete_checkpoints(run_dir)
    return found[-1] if found else None


def model_to_export(run_dir: str | Path) -> Path:
    """The final model if the run finished, else its newest complete step checkpoint."""
    run_dir = Path(run_dir)
    final = run_dir / "final"
    if final.is_dir() and is_complete(final):
        return final
    last = last_complete_checkpoint(run_dir)
    if last is None:
        raise RunDirError(
            f"{run_dir}: no complete checkpoint (no final/ or checkpoint-<step>/ with a {COMPLETE_MARKER} marker)"
        )
    return last


def write_run_manifest(
    run_dir: str | Path,
    *,
    component: str,
    recipe: str,
    base_model: str,
    config: dict,
    data_provenance: dict,
    extra: dict | None = None,
) -> Path:
    """Record what a run is; the label map always comes from the component schema in inference."""
    spec = get_component(component)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "component": spec.name,
        "schema_version": spec.schema_version,
        "label_map": spec.label_map,
        "recipe": recipe,
        "base_model": base_model,
        "training_config": config,
        "data_provenance": data_provenance,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        **(extra or {}),
    }
    path = run_dir / RUN_MANIFEST
    atomic.write_text(path, json.dumps(manifest, indent=2, default=str))
    return path


def read_run_manifest(run_dir: str | Path) -> dict:
    path = Path(run_dir) / RUN_MANIFEST
    if not path.is_file():
        raise RunDirError(f"{run_dir} is not a radmetrics run directory (no {RUN_MANIFEST})")
    return json.loads(path.read_text(encoding="utf-8"))


def write_eval_results(run_dir: str | Path, results: dict) -> None:
    from radmetrics.inference.files.json_io import dumps

    atomic.write_text(Path(run_dir) / EVAL_RESULTS, dumps(results, indent=2, default=float))


def read_eval_results(run_dir: str | Path) -> dict:
    path = Path(run_dir) / EVAL_RESULTS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
