"""Exported-checkpoint contract: the `radmetrics.json` manifest, its verification, and resolution.

An exported checkpoint is a directory that `from_pretrained` can load, plus `radmetrics.json`
(component, schema version, label map, sha256 of every file, provenance) and a model card.
Training writes it (`radmetrics.training.export`); inference reads it through `load_manifest`,
which refuses anything that does not match what the caller asked for.

The sha256 of every file is checked when the export is written and once per downloaded Hub snapshot (hashing 14 GB
of a 7B model on every load would cost minutes). Every load still checks that each listed file is present;
`verify_checksums=True` (or `radmetrics weights verify DIR`) hashes a local directory on demand.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..files import atomic
from .cache import radmetrics_cache
from .components import get_component

MANIFEST_NAME = "radmetrics.json"
MANIFEST_FORMAT = 1
# Files that never count as checkpoint content (the manifest cannot hash itself; the card is prose).
UNHASHED = {MANIFEST_NAME, "README.md", ".gitattributes"}


class CheckpointError(RuntimeError):
    """A checkpoint is missing, corrupted, or does not match the component the caller asked for."""


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_directory(directory: Path) -> dict[str, str]:
    """sha256 of every file below `directory` except the manifest and the model card."""
    directory = Path(directory)
    return {
        p.relative_to(directory).as_posix(): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
        and p.relative_to(directory).as_posix() not in UNHASHED
        and not p.relative_to(directory).parts[0].startswith(".cache")
    }


def resolve_checkpoint(path_or_id: str | os.PathLike, revision: str | None = None) -> Path:
    """Local path first; otherwise a Hub repo id, fetched only because the user named it.

    With HF_HUB_OFFLINE=1 a Hub id resolves only from the local Hugging Face cache.
    """
    return _resolve(path_or_id, revision)[0]


def _resolve(path_or_id: str | os.PathLike, revision: str | None) -> tuple[Path, bool]:
    """(directory, whether it is a Hub snapshot)."""
    local = Path(path_or_id).expanduser()
    if local.exists():
        if not local.is_dir():
            raise CheckpointError(f"{local} is a file; a checkpoint is a directory containing {MANIFEST_NAME}")
        return local, False
    text = str(path_or_id)
    if text.startswith((".", "/", "~")) or text.count("/") != 1:
        raise CheckpointError(
            f"checkpoint directory {text!r} does not exist (and it is not a Hub repo id 'owner/name')"
        )
    from huggingface_hub import snapshot_download

    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}
    try:
        return Path(snapshot_download(repo_id=text, revision=revision, local_files_only=offline)), True
    except Exception as exc:  # huggingface_hub raises several unrelated types here
        hint = " (HF_HUB_OFFLINE is set: only the local cache was searched)" if offline else ""
        raise CheckpointError(f"could not resolve checkpoint {text!r} from the Hugging Face Hub{hint}: {exc}") from exc


def _verified_marker(directory: Path, manifest_text: str) -> Path:
    """Where a Hub snapshot's successful verification is remembered (radmetrics' cache, not the Hub cache)."""
    key = hashlib.sha256(f"{directory.resolve()}\n{manifest_text}".encode()).hexdigest()
    return radmetrics_cache() / "verified" / key


def manifest_component(directory: Path) -> str | None:
    """The component named in `directory`'s manifest, or None when there is no manifest (not an export)."""
    path = Path(directory) / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("component")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from exc


def load_manifest(
    path_or_id: str | os.PathLike,
    component: str,
    revision: str | None = None,
    verify_checksums: bool | None = None,
) -> tuple[Path, dict]:
    """Resolve a checkpoint and verify its manifest against `component`'s schema.

    `verify_checksums`: None (default) hashes a Hub snapshot the first time it is loaded and a local directory
    never (its export verified it); True or False forces it. Returns (directory, manifest). Raises CheckpointError
    naming what does not match.
    """
    directory, from_hub = _resolve(path_or_id, revision)
    manifest_path = directory / MANIFEST_NAME
    if not manifest_path.is_file():
        raise CheckpointError(
            f"{directory} has no {MANIFEST_NAME}: export a training run with `radmetrics export RUN_DIR --out DIR`"
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{manifest_path} is not valid JSON: {exc}") from exc
    for key in ("format_version", "component", "schema_version", "label_map", "files"):
        if key not in manifest:
            raise CheckpointError(f"{manifest_path} lacks the field {key!r}")
    if manifest["format_version"] != MANIFEST_FORMAT:
        raise CheckpointError(
            f"{manifest_path} has manifest format {manifest['format_version']}, this radmetrics reads"
            f" {MANIFEST_FORMAT}"
        )
    expected = get_component(component)
    if manifest["component"] != expected.name:
        raise CheckpointError(
            f"{directory} holds a {manifest['component']!r} checkpoint, but a {expected.name!r} checkpoint was"
            " asked for"
        )
    if manifest["schema_version"] != expected.schema_version:
        raise CheckpointError(
            f"{directory}: {component} schema version {manifest['schema_version']} != {expected.schema_version} "
            "expected by this radmetrics; re-export it with a matching version"
        )
    problem = expected.label_map_problem(manifest["label_map"])
    if problem:
        raise CheckpointError(
            f"{directory}: the label map in {MANIFEST_NAME} does not match the {component} schema ({problem})"
        )
    _check_model_labels(directory, manifest)
    check_files_present(directory, manifest["files"])
    marker = _verified_marker(directory, manifest_path.read_text(encoding="utf-8")) if from_hub else None
    if verify_checksums or (verify_checksums is None and marker is not None and not marker.exists()):
        verify_files(directory, manifest["files"])
        if marker is not None:
            marker.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(marker, str(directory))
    return directory, manifest


def _check_model_labels(directory: Path, manifest: dict) -> None:
    """The model's own config must agree with the manifest where it carries a label list."""
    config_path = directory / "config.json"
    labels = manifest["label_map"].get("labels")
    if labels is None or not config_path.is_file():
        return
    id2label = json.loads(config_path.read_text(encoding="utf-8")).get("id2label")
    if id2label is None:
        return
    found = [id2label.get(str(i)) for i in range(len(id2label))]
    if found != labels:
        raise CheckpointError(f"{config_path}: id2label {found} does not match the manifest label map {labels}")


def check_files_present(directory: Path, files: dict[str, str]) -> None:
    if not files:
        raise CheckpointError(f"{directory}/{MANIFEST_NAME} lists no files")
    for rel in files:
        if not (directory / rel).is_file():
            raise CheckpointError(f"{directory}: file {rel} listed in the manifest is missing")


def verify_files(directory: Path, files: dict[str, str]) -> None:
    """Checksums of the listed files (check_files_present has already run)."""
    for rel, digest in files.items():
        if sha256_file(directory / rel) != digest:
            raise CheckpointError(
                f"{directory}: checksum of {rel} does not match the manifest (corrupted or modified)"
            )


# Converted releases serve the same metrics as their kind (a RadGraph DyGIE model is the `radgraph` component).
_KEY_OF_COMPONENT = {"radgraph_dygie": "radgraph", "ratescore_pipeline": "rate_ner"}


def component_key(component: str) -> str:
    """The component key a manifest's component is passed to the metrics under."""
    return _KEY_OF_COMPONENT.get(component, component)


def component_kind(component: str) -> str:
    """The released-weights kind (`KIND=PATH`) a manifest's component belongs to."""
    key = component_key(component)
    return "rate_ner" if key.startswith("rate_ner") else key
