"""Publish files and folders whole or not at all: the one way radmetrics writes a file another step or run reads.

A writer builds into a temporary sibling with a unique name (same folder, so `os.replace` is a rename on one file
system, and two processes never share a temporary name), flushes and fsyncs it, then replaces the target. A crash
leaves the old file or the new one, never half of one; a reader never sees a partial file. Where two processes may
build the same thing (a cache, an unpacked archive), `built_once` holds a lock beside the target so that one builds
and the others wait and reuse what it published.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock

TEMP_MARK = ".radmetrics-tmp-"  # every temporary sibling's name holds this, so a leftover is recognisable


def _temp_prefix(target: Path) -> str:
    return f".{target.name}{TEMP_MARK}"


def _fsync_folder(folder: Path) -> None:
    """fsync a folder so that a rename inside it survives a power cut (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems (and Windows) refuse to fsync a folder: the rename itself is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """`with atomic_write(path) as fh: fh.write(...)`: the file appears at `path` whole when the block ends, and not
    at all if it raises. `mode` is "w" (text) or "wb" (bytes)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes a new file: mode 'w' or 'wb', not {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=_temp_prefix(target), dir=target.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding, newline=None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, 0o644 & ~_umask())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    _fsync_folder(target.parent)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """`Path.write_text`, published atomically."""
    with atomic_write(path, "w", encoding) as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """`Path.write_bytes`, published atomically."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """`with atomic_directory(out) as staging: (build into staging)`: the folder replaces `out` when the block ends,
    and nothing changes if it raises. An existing `out` is moved aside first and removed after the new one is in
    place, so `out` is never a half-built folder (for an instant it may be absent)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), dir=target.parent))
    try:
        yield staging
        os.chmod(staging, 0o755 & ~_umask())
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def replace_directory(source: Path, target: Path) -> None:
    """Rename the finished folder `source` to `target`, replacing what was there."""
    if target.exists() or target.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), dir=target.parent))
        os.rmdir(old)
        os.replace(target, old)
        os.replace(source, target)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
    else:
        os.replace(source, target)
    _fsync_folder(target.parent)


def lock_for(path: str | os.PathLike, timeout: float = -1) -> FileLock:
    """The inter-process lock of whatever is built at `path` (a `.lock` file beside it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(target.with_name(target.name + ".lock")), timeout=timeout)


def built_once(path: str | os.PathLike, build: Callable[[Path], None], is_built: Callable[[Path], bool]) -> Path:
    """`path`, built by `build(staging_folder)` unless `is_built(path)`; two processes asking at once build it once
    (the second waits on the lock, then finds it built)."""
    target = Path(path)
    if is_built(target):
        return target
    with lock_for(target):
        if not is_built(target):
            with atomic_directory(target) as staging:
                build(staging)
    return target
