"""How every metric that runs offline orders the clinical ranking suite, per category, with case-bootstrap intervals.

Runs `radmetrics meta-eval ranking` twice on the bundled suite: with no `--metrics` (every metric that runs without
components or an endpoint: BLEU-2, BLEU-4, ROUGE-L, BERTScore with the bundled MiniLM, semantic_green findings first)
and with `--metrics semantic_green --option semantic_green.findings=statements` (every statement judged, as before
findings first). Their keys go into one results file, the second run's suffixed ` (findings=statements)`, with the
commit, the machine, the commands and the suite's size. A metric that needs a component (CheXbert, RadGraph,
RaTEScore, RadCliQ, GREEN) or an endpoint joins with `--components` / `--endpoint`, passed through to both runs.

    python benchmarks/ranking/ranking_suite.py --results benchmarks/results/ranking_suite_wave6_baseline.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine  # noqa: E402

from radmetrics.inference.cli import main as radmetrics  # noqa: E402
from radmetrics.inference.files.atomic import write_text  # noqa: E402
from radmetrics.inference.files.json_io import dumps  # noqa: E402
from radmetrics.inference.files.output_paths import check_output_file  # noqa: E402

SETTINGS = {  # suffix of the keys: the arguments after `radmetrics meta-eval ranking`
    "": [],
    " (findings=statements)": ["--metrics", "semantic_green", "--option", "semantic_green.findings=statements"],
}


def run_setting(extra: list[str], passed: list[str], work: Path) -> dict:
    """ranking.json of one `meta-eval ranking` run; SystemExit naming the command when it fails."""
    argv = ["meta-eval", "ranking", *extra, *passed, "--out", str(work)]
    status = radmetrics(argv)
    if status != 0:
        raise SystemExit(f"ranking_suite.py: radmetrics {' '.join(argv)} exited {status}")
    return json.loads((work / "ranking.json").read_text(encoding="utf-8"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", required=True, help="JSON file for the figures")
    parser.add_argument("--bootstrap", type=int, default=1000, help="case resamples for the 95%% intervals")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--components", nargs="+", default=[], help="passed to `meta-eval ranking`")
    parser.add_argument("--endpoint", help="passed to `meta-eval ranking`")
    args = parser.parse_args(argv)
    results_file = check_output_file(args.results, what="--results")
    passed = ["--bootstrap", str(args.bootstrap), "--seed", str(args.seed)]
    passed += ["--components", *args.components] if args.components else []
    passed += ["--endpoint", args.endpoint] if args.endpoint else []
    commit = subprocess.check_output(["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"], text=True).strip()
    keys, signatures, commands, runs = {}, {}, [], []
    with tempfile.TemporaryDirectory(prefix="radmetrics_ranking_") as work:
        for number, (suffix, extra) in enumerate(SETTINGS.items()):
            report = run_setting(extra, passed, Path(work) / str(number))
            keys.update({key + suffix: entry for key, entry in report["keys"].items()})
            signatures.update({key + suffix: text for key, text in report["signatures"].items()})
            commands.append(" ".join(["radmetrics meta-eval ranking", *extra, *passed, "--out DIR"]))
            runs.append(report)
    results = {
        "what": "pairwise accuracy of every offline metric on the clinical ranking suite, per category, with 95% "
        "case-bootstrap intervals (the same case draws for every key)",
        "command": " ".join(["python benchmarks/ranking/ranking_suite.py", *(argv or sys.argv[1:])]),
        "commands": commands,
        "commit": commit,
        "version": runs[0]["version"],
        "date": datetime.date.today().isoformat(),
        "machine": f"{machine()}; {runs[0]['machine']}",
        "suite": runs[0]["suite"],
        "cases": runs[0]["cases"],
        "bootstrap": runs[0]["bootstrap"],
        "keys": keys,
        "signatures": signatures,
    }
    write_text(results_file, dumps(results, indent=2) + "\n")
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
