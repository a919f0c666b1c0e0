"""Figures for meta-evaluation reports (matplotlib, imported when a figure is drawn)."""

from __future__ import annotations

from pathlib import Path


def scatter(scores, human, key: str, path: Path, title: str) -> None:
    """A metric's error-oriented scores against the raters' mean, saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(scores, human, s=12, alpha=0.6)
    ax.set_xlabel(f"{key} (oriented: higher = more errors)")
    ax.set_ylabel("radiologists (mean, error orientation)")
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
