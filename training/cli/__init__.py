"""The training side of the `radmetrics` command: `train`, `export`, `weights` and `rehearse` (found through the
`radmetrics.commands` entry-point group, as inference/cli finds its own)."""
