"""Score signatures: one compact string per score key that pins everything that changes its value, printed beside it
(the practice of sacreBLEU's signatures for machine translation).

    radgraph_partial|w:radgraph-xl#3f9a1c|case:insensitive|cpu-fp32|v:0.1.0+079e59a

- `w:NAME#HASH` for each component (and each option that names weights): an export's manifest checksum (the sha256 of
  its file list, which already holds every file's sha256), a Hugging Face cache snapshot's commit, or for any other
  file its sha256, computed once per file (keyed by path, size and modification time in the radmetrics cache), never
  once per run;
- every option whose change changes values (the metric class declares which), at its value in this run;
- the device and precision, for metrics that run a model; the LLM judge's model, for LLM-judged metrics;
- the metrics a composite combines, by their own parts (`bertscore.model:default`);
- radmetrics' version and, in a git checkout, its commit.
Two runs with the same signature on the same inputs give the same values (tests/inference/test_signatures.py).
"""

from __future__ import annotations

import platform
import subprocess
from functools import lru_cache
from pathlib import Path

from ..loading.fingerprints import SHORT, fingerprint, option_value

__all__ = ["SHORT", "fingerprint", "machine", "option_value", "version"]  # fingerprints: loading/fingerprints.py


@lru_cache(maxsize=1)
def version() -> str:
    """radmetrics' version, with `+COMMIT` when it runs from its own git checkout (`+COMMIT.dirty` when tracked files
    have changed); an installed wheel inside someone else's repository gives the version alone."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        text = installed("radmetrics")
    except PackageNotFoundError:
        text = "unknown"
    here = Path(__file__).resolve().parent

    def git(*args) -> str | None:
        done = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, timeout=10)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        top = git("rev-parse", "--show-toplevel")
        if top and Path(top).resolve() == here.parent.parent and git("ls-files", "--error-unmatch", "signature.py"):
            dirty = git("status", "--porcelain", "--untracked-files=no")
            text += f"+{git('rev-parse', '--short=7', 'HEAD')}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        pass
    return text


def machine() -> str:
    """Where a result was computed (architecture and Python), for the results files meta-evaluation writes."""
    return f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"
