"""The finding-pair judge's benchmark scripts run to the end on the shipped judge (few resamples): a change to their
shared settings (finding_judge_threshold.py's (threshold, scope, significance)) once broke finding_judge_ceiling.py
unseen, because nothing ran it."""

import json
import subprocess
import sys

import pytest

from radmetrics.training.rehearsal import REPO

JUDGE = REPO / "inference" / "resources" / "finding_judge"


def run(script: str, results, *args: str) -> dict:
    command = [sys.executable, str(REPO / "benchmarks" / "green" / script), "--results", str(results), *args]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, f"{script} failed:\n{done.stderr[-3000:]}"
    return json.loads(results.read_text())


@pytest.mark.slow
def test_the_ceiling_and_the_threshold_cross_validation_run_on_the_shipped_judge(tmp_path):
    ceiling = run("finding_judge_ceiling.py", tmp_path / "ceiling.json", "--bootstrap", "20")
    assert ceiling["listed_findings"] and ceiling["extracted_findings"]
    chosen = run(
        "finding_judge_threshold.py",
        tmp_path / "threshold.json",
        "--judge",
        str(JUDGE),
        "--bootstrap",
        "20",
        "--parts",
        "cv",
        "listed",
    )
    assert "threshold=" in chosen["radpref_cross_validated"]["refit_on_all_cases (the default's choice; in-sample)"]
