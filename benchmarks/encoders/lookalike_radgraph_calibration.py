"""How many entities and relations a full-size RadGraph look-alike finds in IU reports for given scorer biases: the
count `tests/parity/lookalikes.py` RADGRAPH_FULL's biases were chosen by (about 20 entities, 0.5 per word, and 20
relations per report, as the published models find).

    python benchmarks/encoders/lookalike_radgraph_calibration.py --model-type radgraph --biases -3.6 3.48

One setting per call: radmetrics keeps a loaded component for the life of the process, so a second setting in the
same process would be scored with the first one's weights. Builds into a temporary folder; scores 24 of the
calibration reports (`calibration_reports()[40:64]`) with radmetrics' RadGraph and prints the counts per report.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "tests")]

from parity import lookalikes  # noqa: E402


def main() -> None:
    from radmetrics.inference.scoring.scorer import Scorer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-type", choices=["radgraph", "radgraph-xl"], default="radgraph")
    parser.add_argument("--biases", nargs=2, type=float, metavar=("ENTITY", "RELATION"), required=True)
    args = parser.parse_args()
    lookalikes.RADGRAPH_FULL[args.model_type] = tuple(args.biases)
    reports = lookalikes.calibration_reports()[40:64]
    with tempfile.TemporaryDirectory() as root:
        root = Path(root)
        lookalikes.FULL_ARTEFACTS[args.model_type](root)  # the benchmark's builder, with the biases set above
        archive = lookalikes.snapshot(root, lookalikes.RRG) / f"{args.model_type}.tar.gz"
        base = lookalikes.snapshot(root, lookalikes.RADGRAPH_BASES[args.model_type])
        result = Scorer(
            ["radgraph"],
            {"radgraph": str(archive)},
            {"radgraph": {"base_model": str(base), "case": "reference"}},
            n_bootstrap=0,
        )(reports, reports[::-1])
    graphs = [d["reference_annotation"] for d in result.details["radgraph"]]
    entities = [e for graph in graphs for e in graph["entities"].values()]
    labels = {}
    for entity in entities:
        labels[entity["label"]] = labels.get(entity["label"], 0) + 1
    words = sum(len(r.split()) for r in reports)
    print(
        f"{args.model_type} biases {args.biases}: {len(entities) / len(reports):.1f} entities per report"
        f" ({len(entities) / words:.2f} per word), {sum(len(e['relations']) for e in entities) / len(reports):.1f}"
        f" relations per report; labels {labels}"
    )


if __name__ == "__main__":
    main()
