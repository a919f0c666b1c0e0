"""The dataset card of `radmetrics data import`: what was read, the label set, what was left out and why, the splits
and their overlap."""

from __future__ import annotations

import json

from radmetrics.data_builders.corpus.leakage import overlap_card_section


def _dropped_section(stats: dict) -> str:
    if not stats["dropped"]:
        return "Every record passed the checks; none was left out.\n"
    counts = ", ".join(f"{n} {kind}" for kind, n in stats["dropped"].items())
    listed = "\n".join(f"- {line}" for line in stats["dropped_records"])
    return f"**Left out with --drop-bad: {counts}.**\n\n{listed}\n"


def render_import_card(stats: dict) -> str:
    label_set = "\n".join(f"- {key}: {', '.join(labels)}" for key, labels in stats["label_set"].items())
    return (
        "---\ntags: [radiology, radmetrics, user-labels]\n---\n# radmetrics imported labels\n\n"
        f"Format `{stats['format']}`, files {', '.join(stats['options']['files'])}; read by `{stats['recipes']}` "
        f"with `--silver_dir` this folder.\n\nRecords per split: `{json.dumps(stats['records_per_split'])}`; splits "
        f"{stats['splits']}.\n\n## Label set\n\n{label_set}\n\nLabel counts:\n\n```json\n"
        f"{json.dumps(stats['label_counts'], indent=1)}\n```\n\n## Checks\n\n{_dropped_section(stats)}\n"
        f"{overlap_card_section(stats['split_overlap'])}"
    )
