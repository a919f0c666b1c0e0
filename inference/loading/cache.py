"""radmetrics' own cache folder, apart from the Hub cache: verified snapshots, dequantised GGUF models, unpacked
RadGraph archives, metric fingerprints and the LLM answer store."""

from __future__ import annotations

import os
from pathlib import Path


def radmetrics_cache() -> Path:
    """$RADMETRICS_CACHE, else $XDG_CACHE_HOME/radmetrics (~/.cache/radmetrics)."""
    root = (
        os.environ.get("RADMETRICS_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "radmetrics"
    )
    return Path(root).expanduser()
