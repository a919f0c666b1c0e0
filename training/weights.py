"""Convert the metric authors' released weights into radmetrics' export contract (`radmetrics weights convert`).

The result is a directory that `from_pretrained` loads (safetensors, config, tokenizer), with a `radmetrics.json`
manifest and a model card, like a training export, whose `released` entry records where it came from (catalogue
name, Hub repository or local path, revision, sha256 of the source, licence) and which package's behaviour radmetrics
reproduces with it. Scoring with the converted directory gives the same values as with the original artefact.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from radmetrics.inference.files import atomic
from radmetrics.inference.files.output_paths import refuse_non_empty
from radmetrics.inference.loading.checkpoint import MANIFEST_FORMAT, MANIFEST_NAME, hash_directory, load_manifest
from radmetrics.inference.loading.components import get_component
from radmetrics.inference.loading.released import ARTEFACTS, KINDS, fetch, identify, sha256_of

CARD = """---
library_name: transformers
license: other
license_name: see-below
tags:
- radiology
- radmetrics
- {component}
base_model: {source}
---

# {artefact} (converted by radmetrics)

{description}. Converted from `{source}` ({size_note}) by `radmetrics weights convert`; scoring with this
directory reproduces {reference}.

Licence of the original weights: {licence}. The conversion changes the file format only; the original terms apply.

```python
from radmetrics.inference.scoring.scorer import Scorer
from radmetrics.inference.files import atomic
Scorer(["{metric}"], {{"{key}": "PATH"}})(references, candidates)
```
"""


def _source(src: str, local: Path, revision: str | None) -> dict:
    artefact = ARTEFACTS.get(src)
    return {
        "artefact": artefact.name if artefact else None,
        "source": (
            f"{artefact.repo_id}/{artefact.filename}"
            if artefact and artefact.filename
            else (artefact.repo_id if artefact else str(local.resolve()))
        ),
        "revision": revision or (_snapshot_revision(local) if artefact else None),
        "sha256": sha256_of(local),
        "licence": artefact.licence if artefact else "unknown (a local file: check where it came from)",
        "reference": artefact.reference if artefact else None,
    }


def _snapshot_revision(path: Path) -> str | None:
    """The commit of a file or folder in the Hugging Face cache (its snapshots/<commit>/ parent)."""
    parts = path.resolve().parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts else None


def _save(model, tokenizer, out: Path) -> None:
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def _convert_chexbert(local: Path, out: Path, base_model: str | None) -> tuple[str, dict, str]:
    from radmetrics.inference.metrics.chexbert.released import BASE_MODEL, load_released_chexbert

    _save(*load_released_chexbert(local, base_model or BASE_MODEL), out)
    return "chexbert", get_component("chexbert").label_map, base_model or BASE_MODEL


def _convert_radgraph(local: Path, out: Path, base_model: str | None) -> tuple[str, dict, str]:
    from radmetrics.inference.metrics.radgraph.dygie import load_released_radgraph

    model, tokenizer = load_released_radgraph(local, base_model)
    _save(model, tokenizer, out)
    return (
        "radgraph_dygie",
        {"entities": model.config.entity_labels, "relations": model.config.relation_labels},
        model.config.base_model,
    )


def _convert_rate_ner(local: Path, out: Path, encoder: str | None) -> tuple[str, dict, str]:
    from radmetrics.inference.metrics.ratescore.released import ENCODER, RaTEScorePipeline

    pipeline = RaTEScorePipeline.from_component(str(local), encoder)
    _save(pipeline.ner_model, pipeline.ner_tokenizer, out / "ner")
    _save(pipeline.encoder_model, pipeline.encoder_tokenizer, out / "encoder")
    labels = [pipeline.labels[i] for i in range(len(pipeline.labels))]
    return "ratescore_pipeline", {"labels": labels}, encoder or ENCODER


def _convert_green(local: Path, out: Path, _: str | None) -> tuple[str, dict, str]:
    """The model's own files, weights as safetensors (a .bin is converted without unpickling objects)."""
    import shutil

    import torch
    from safetensors.torch import save_file

    for path in sorted(p for p in local.iterdir() if p.is_file() and not p.name.startswith(".")):
        if path.suffix == ".bin":
            state = torch.load(path, map_location="cpu", weights_only=True)
            save_file(
                {k: v.contiguous() for k, v in state.items()},
                str(out / path.name.replace("pytorch_model", "model").replace(".bin", ".safetensors")),
                metadata={"format": "pt"},
            )
        elif path.name != "README.md":
            shutil.copy2(path, out / path.name)
    index = out / "pytorch_model.bin.index.json"
    if index.is_file():  # sharded .bin weights: the index now names the safetensors shards
        text = index.read_text(encoding="utf-8").replace("pytorch_model", "model").replace(".bin", ".safetensors")
        atomic.write_text(out / "model.safetensors.index.json", text)
        index.unlink()
    return "green", get_component("green").label_map, None


CONVERTERS = {
    "chexbert": _convert_chexbert,
    "radgraph": _convert_radgraph,
    "rate_ner": _convert_rate_ner,
    "green": _convert_green,
}
METRIC = {
    "chexbert": ("chexbert", "chexbert"),
    "radgraph": ("radgraph", "radgraph"),
    "rate_ner": ("ratescore", "rate_ner"),
    "green": ("green", "green"),
}


def convert(src: str, kind: str, out: str | Path, revision: str | None = None, base_model: str | None = None) -> Path:
    """`src` (a path or a catalogue name) of `kind` -> an export in `out`. `base_model`: for chexbert and radgraph the
    transformer's config/tokenizer folder, for rate_ner the entity encoder (BioLORD-2023-C)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if src in ARTEFACTS and ARTEFACTS[src].kind != kind:
        raise ValueError(f"{src} is a {ARTEFACTS[src].kind} release, not {kind}")
    out = Path(out)
    refuse_non_empty(out, what="output directory")
    local = fetch(src, revision)
    if identify(kind, local) != "released":
        raise ValueError(f"{src} is already a radmetrics export")
    out.mkdir(parents=True, exist_ok=True)
    component, label_map, base = CONVERTERS[kind](local, out, base_model)
    spec = get_component(component)
    manifest = {
        "format_version": MANIFEST_FORMAT,
        "component": component,
        "schema_version": spec.schema_version,
        "label_map": label_map,
        "description": spec.description,
        "base_model": base,
        "released": _source(src, local, revision),
        "converted": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "files": hash_directory(out),
    }
    atomic.write_text(out / MANIFEST_NAME, json.dumps(manifest, indent=2))
    metric, key = METRIC[kind]
    released = manifest["released"]
    (out / "README.md").write_text(
        CARD.format(
            component=component,
            source=released["source"],
            artefact=released["artefact"] or Path(released["source"]).name,
            description=spec.description,
            size_note=f"sha256 {released['sha256'][:16]}…",
            licence=released["licence"],
            reference=released["reference"] or "the package the original was made for",
            metric=metric,
            key=key,
        ),
        encoding="utf-8",
    )
    load_manifest(
        out, component, verify_checksums=True
    )  # a conversion that scoring would refuse is a bug here, not later
    return out
