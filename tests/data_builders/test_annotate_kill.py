"""`radmetrics data annotate` killed with SIGKILL at seeded points and run again resumes after its last complete
chunk, annotates no pair twice, and publishes split files byte-identical to an uninterrupted run's (issue 62, item 4:
"`data annotate` and `data pairs` resume the same way"; the score kill test is tests/inference/test_streaming_kill.py).
The teacher is the semantic one (no LLM), over the findings the shipped extractor lists. Slow: each run is a process
of its own that loads its models."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from radmetrics.data_builders.record_stream import STREAM_NAME

pytestmark = pytest.mark.slow
pytest.importorskip("datasets", reason="radmetrics data writes Hugging Face datasets: the train extra")

ENV = {**os.environ, "PYTHONHASHSEED": "0"}
PUBLISHED = ("train.jsonl", "validation.jsonl", "test.jsonl", "stats.json", "README.md")


def write_pairs(path: Path, n: int, seed: int) -> None:
    """n pairs of two- or three-sentence reports made of the bundled IU X-ray corpus' sentences (seeded)."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    sentences = sorted(
        {s.strip() + "." for r in iu_xray_corpus()[:400] for s in r.text.split(".") if 3 < len(s.split()) < 10}
    )
    rng = random.Random(seed)
    rows = [
        {
            "id": f"p{i}",
            "reference": " ".join(rng.sample(sentences, 3)),
            "candidate": " ".join(rng.sample(sentences, 2)),
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def command(folder: Path, out: str, chunk: int) -> list[str]:
    pairs = str(folder / "pairs.jsonl")
    return [sys.executable, "-m", "radmetrics.inference.cli", "data", "annotate", "--pairs", pairs, "--chunk-size",
            str(chunk), "--out", str(folder / out)]  # fmt: skip


def complete_chunks(stream: Path) -> int:
    if not stream.exists():
        return 0
    with open(stream, "rb") as fh:
        return sum(1 for line in fh if line.startswith(b'{"chunk"') and line.endswith(b"\n"))


def start_line(stderr: str) -> str:
    """The line where a run says how it starts: a new run, resuming, or every pair already done."""
    marks = ("a new run of", "resuming:", "was done by an earlier run")
    return next((line for line in stderr.splitlines() if any(mark in line for mark in marks)), "")


def run_and_kill(argv: list[str], stream: Path, log: Path, after_chunks: int, delay: float, limit=900) -> str:
    """Start the command, SIGKILL it `delay` seconds after the stream holds `after_chunks` complete chunks and the run
    has printed its start line; its stderr. Fails if the run ends first."""
    with open(log, "w") as err:
        process = subprocess.Popen(argv, stderr=err, stdout=subprocess.DEVNULL, env=ENV)
        start = time.monotonic()
        while complete_chunks(stream) < after_chunks or not start_line(log.read_text()):
            assert process.poll() is None, f"the run ended before {after_chunks} chunks: {log.read_text()[-2000:]}"
            assert time.monotonic() - start < limit, "no progress"
            time.sleep(0.02)
        time.sleep(delay)
        assert process.poll() is None, "the run finished before the kill"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    return log.read_text()


def test_annotate_killed_three_times_resumes_to_the_uninterrupted_runs_bytes(tmp_path):
    n, chunk = 120, 15
    write_pairs(tmp_path / "pairs.jsonl", n, seed=65)
    whole = subprocess.run(command(tmp_path, "whole", chunk), capture_output=True, text=True, env=ENV)
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert f"a new run of {n} pairs in chunks of {chunk}" in start_line(whole.stderr)
    rng = random.Random(3)
    argv, stream, starts = command(tmp_path, "killed", chunk), tmp_path / "killed" / STREAM_NAME, []
    for point in sorted(rng.sample(range(1, n // chunk), 3)):
        starts.append(start_line(run_and_kill(argv, stream, tmp_path / "stderr.log", point, rng.uniform(0, 0.2))))
        assert complete_chunks(stream) >= point
    final = subprocess.run(argv, capture_output=True, text=True, env=ENV)
    assert final.returncode == 0, final.stderr[-3000:]
    starts.append(start_line(final.stderr))
    assert f"a new run of {n} pairs" in starts[0]
    for line in starts[1:]:  # each run after a kill resumed where the complete chunks left off
        assert "resuming:" in line, line
        done = int(line.split("resuming: ")[1].split(" of ")[0])
        assert done % chunk == 0 and f"continuing from pair {done + 1}" in line
    for name in PUBLISHED:
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    written = [json.loads(line)["i"] for line in stream.read_text().splitlines() if line.startswith('{"i"')]
    assert written == list(range(n))  # every pair annotated and written once, in order
