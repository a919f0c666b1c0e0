"""Output paths checked at the door: every command creates or checks the places it will write before any model loads
or any work starts, so that a run of hours cannot end in `NotADirectoryError` with its results lost.

`OutputPathError` is one line naming the path and the fix; the CLI prints it and exits 2.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class OutputPathError(ValueError):
    """An output path that cannot be written (one line naming the path and the fix)."""


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(os.sep)


def _refuse_blocked(path: Path, what: str) -> None:
    """OutputPathError when a file (not a folder) stands where `path` or one of its parent folders must be."""
    blocker = _existing_ancestor(path)
    if blocker.is_dir():
        return
    if blocker == path:
        raise OutputPathError(f"{what} {path} is a file, not a folder: give a folder path")
    raise OutputPathError(f"{what} {path}: {blocker} is a file, not a folder: give a path under a folder")


def _probe_writable(folder: Path, what: str, shown: Path) -> None:
    """Write and remove a scratch file in `folder` (the one test that holds on every file system and for root)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".radmetrics-probe-", dir=folder)
    except OSError as exc:
        reason = exc.strerror or exc
        raise OutputPathError(f"{what} {shown} cannot be written ({reason}): choose a writable folder") from None
    os.close(fd)
    os.unlink(probe)


def ensure_output_dir(path: str | os.PathLike, what: str = "--out") -> Path:
    """Create the output folder `path` (and its parents) now and check that files can be written in it."""
    folder = Path(path).expanduser()
    _refuse_blocked(folder, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or exc
        raise OutputPathError(f"{what} {folder} cannot be created ({reason}): choose a writable folder") from None
    _probe_writable(folder, what, folder)
    return folder


def refuse_non_empty(path: str | os.PathLike, what: str = "--out") -> None:
    """OutputPathError when the folder `path` exists and holds anything."""
    folder = Path(path).expanduser()
    if folder.is_dir() and any(folder.iterdir()):
        raise OutputPathError(f"{what} {folder} exists and is not empty: give a new or empty folder")


def check_output_dir(path: str | os.PathLike, what: str = "--out") -> Path:
    """Check, without creating anything, that the output folder `path` can be made and written: it is a writable
    folder, or its nearest existing parent is one. A refused command leaves nothing behind; the command makes the
    folder when it writes."""
    folder = Path(path).expanduser()
    _refuse_blocked(folder, what)
    _probe_writable(_existing_ancestor(folder), what, folder)
    return folder


def check_output_file(path: str | os.PathLike, what: str = "--out") -> Path:
    """Check that the file `path` can be written: its folder is made (or exists) and is writable, and `path` itself
    is not a folder. Nothing is written at `path`."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise OutputPathError(f"{what} {target} is a folder: give a file path")
    check_output_dir(target.parent if str(target.parent) else Path("."), what=f"{what}'s folder")
    return target


class OutputFolder(str):
    """argparse `type=` of an output folder argument: parsing has no side effect; `check_output_arguments` checks
    every such value before the command runs (the command makes the folder when it writes)."""


class NewOutputFolder(OutputFolder):
    """argparse `type=` of an output folder that must be new or empty (an export: nothing of another run mixes in)."""


class OutputFile(str):
    """argparse `type=` of an output file argument (checked, not written, before the command runs)."""


def check_output_arguments(args, flags: dict[str, str] | None = None) -> None:
    """Check every output path among the parsed arguments `args` (an argparse Namespace); `flags` maps an
    argument's dest to the flag named in the message. The CLI calls this before any command runs, so no model loads
    before its outputs are known to be writable."""
    for dest, value in sorted(vars(args).items()):
        values = value if isinstance(value, (list, tuple)) else [value]
        flag = (flags or {}).get(dest, "--" + dest)
        for item in values:
            if isinstance(item, NewOutputFolder):
                refuse_non_empty(item, what=flag)
            if isinstance(item, OutputFolder):
                check_output_dir(item, what=flag)
            elif isinstance(item, OutputFile):
                check_output_file(item, what=flag)
