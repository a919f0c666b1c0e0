"""`radmetrics score` killed with SIGKILL at seeded points and run again resumes after its last complete chunk, and
writes per_sample, summary and details byte-identical to an uninterrupted run's (issue 62, item 4). Slow: each run
is a process of its own that loads its models."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from radmetrics.inference.files.score_stream import STREAM_NAME

pytestmark = pytest.mark.slow


def short_reports(n: int, seed: int) -> tuple[list[str], list[str]]:
    """n pairs of two-sentence reports made of the bundled IU X-ray corpus' sentences (seeded)."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    sentences = sorted(
        {s.strip() + "." for r in iu_xray_corpus()[:400] for s in r.text.split(".") if 3 < len(s.split()) < 10}
    )
    rng = random.Random(seed)
    return [" ".join(rng.sample(sentences, 2)) for _ in range(n)], [
        " ".join(rng.sample(sentences, 2)) for _ in range(n)
    ]


# bert_score orders the sentences of a call through a set (`dedup_and_sort`), so that with Python's per-process hash
# seed, two processes batch the same sentences differently and differ in the last float32 bits (measured: 24 of 250
# pairs, up to 2.5e-7, with or without one thread and MKL_CBWR); every process here gets the same seed
ENV = {**os.environ, "PYTHONHASHSEED": "0"}


def command(folder: Path, out: str, options: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "radmetrics.inference.cli",
        "score",
        "--refs",
        str(folder / "refs.txt"),
        "--hyps",
        str(folder / "hyps.txt"),
        *options,
        "--bootstrap",
        "200",
        "--out",
        str(folder / out),
    ]


def complete_chunks(stream: Path) -> int:
    if not stream.exists():
        return 0
    with open(stream, "rb") as fh:
        return sum(1 for line in fh if line.startswith(b'{"chunk"') and line.endswith(b"\n"))


def start_line(stderr: str) -> str:
    """The line where a run says how it starts: a new run, resuming, or every pair already scored."""
    marks = ("a new run of", "resuming:", "every pair was scored")
    return next((line for line in stderr.splitlines() if any(mark in line for mark in marks)), "")


def run_and_kill(argv: list[str], stream: Path, log: Path, after_chunks: int, delay: float, limit=900) -> str:
    """Start the command, SIGKILL it `delay` seconds after the stream holds `after_chunks` complete chunks and the run
    has printed its start line; its stderr (through a file: a pipe nobody reads could stall it). Fails if the run
    ends first."""
    with open(log, "w") as err:
        process = subprocess.Popen(argv, stderr=err, stdout=subprocess.DEVNULL, env=ENV)
        start = time.monotonic()
        # the run has said how it starts (a resumed run can find `after_chunks` done before it has printed a line)
        while complete_chunks(stream) < after_chunks or not start_line(log.read_text()):
            assert process.poll() is None, f"the run ended before {after_chunks} chunks: {log.read_text()[-2000:]}"
            assert time.monotonic() - start < limit, "no progress"
            time.sleep(0.02)
        time.sleep(delay)
        assert process.poll() is None, "the run finished before the kill"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    return log.read_text()


def killed_three_times_then_resumed(folder: Path, options: list[str], chunk: int, n: int, seed: int) -> list[str]:
    """Kill the run at three seeded points (after a seeded number of complete chunks, a seeded fraction of a second
    into the next), then let it finish; the start line of each process."""
    rng = random.Random(seed)
    chunks = -(-n // chunk)
    points = sorted(rng.sample(range(1, chunks), 3))
    argv = command(folder, "killed", ["--chunk-size", str(chunk), *options])
    stream, starts = folder / "killed" / STREAM_NAME, []
    for point in points:
        starts.append(start_line(run_and_kill(argv, stream, folder / "stderr.log", point, rng.uniform(0, 0.2))))
        assert complete_chunks(stream) >= point
    final = subprocess.run(argv, capture_output=True, text=True, check=False, env=ENV)
    assert final.returncode == 0, final.stderr[-3000:]
    starts.append(start_line(final.stderr))
    return starts


def assert_same_outputs(folder: Path, n: int) -> None:
    whole, killed = folder / "whole", folder / "killed"
    for name in ("per_sample.jsonl", "summary.json"):
        assert (killed / name).read_bytes() == (whole / name).read_bytes(), name
    for detail in sorted((whole / "details").glob("*.jsonl")):
        assert (killed / "details" / detail.name).read_bytes() == detail.read_bytes(), detail.name
    rows = [json.loads(line) for line in (killed / STREAM_NAME).read_text().splitlines()]
    written = [r["i"] for r in rows if "i" in r]
    assert written == list(range(n))  # every pair written once, in order


def check_resumes(starts: list[str], chunk: int) -> None:
    """Each run after a kill resumed where the chunks complete at the kill left off (none scored again)."""
    for line in starts[1:]:
        assert "resuming:" in line, line
        done = int(line.split("resuming: ")[1].split(" of ")[0])
        assert done % chunk == 0 and f"scoring from pair {done + 1}" in line


def test_score_killed_three_times_resumes_to_the_uninterrupted_runs_bytes(tmp_path):
    n, chunk = 2000, 250
    refs, hyps = short_reports(n, seed=62)
    hyps[7] = ""
    (tmp_path / "refs.txt").write_text("\n".join(refs) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(hyps) + "\n")
    options = ["--metrics", "rougeL", "bleu4", "semantic_green", "bertscore"]
    whole = subprocess.run(
        command(tmp_path, "whole", ["--chunk-size", str(chunk), *options]), capture_output=True, env=ENV
    )
    assert whole.returncode == 0, whole.stderr[-3000:]
    starts = killed_three_times_then_resumed(tmp_path, options, chunk, n, seed=4)
    assert "a new run of 2000 pairs" in starts[0]
    check_resumes(starts, chunk)  # the first process started the run; each later one resumed
    assert_same_outputs(tmp_path, n)


def stopping_soon(model_dir: Path) -> None:
    """Make a GREEN look-alike answer in a few tokens: its last norm keeps one dimension, whose sign picks </s> or
    another token (as `lookalikes.build_crimson(stop_at_once=True)` does), so that the released model's 2,048-token
    budget is not spent on every answer. The answers stay deterministic and unparsable (pairs not scored)."""
    import torch
    from safetensors.torch import load_file, save_file

    state = load_file(str(model_dir / "model.safetensors"))
    hidden, dtype = state["model.norm.weight"].shape[0], state["lm_head.weight"].dtype
    norm = torch.full((hidden,), -1.0)
    norm[0] = 1.0
    head = torch.zeros(state["lm_head.weight"].shape)
    head[2, 0], head[100, 0] = 10.0, -10.0  # </s> (id 2) when dimension 0 is positive, token 100 otherwise
    state["model.norm.weight"], state["lm_head.weight"] = norm.to(dtype), head.to(dtype)
    save_file({k: v.contiguous() for k, v in state.items()}, str(model_dir / "model.safetensors"), {"format": "pt"})


def test_a_green_lookalike_killed_three_times_resumes_to_the_same_bytes(tmp_path):
    from parity import lookalikes

    root = tmp_path / "lookalikes"
    lookalikes.build_green(root)
    green = lookalikes.snapshot(root, lookalikes.GREEN_REPOS[0])
    stopping_soon(green)
    n, chunk = 16, 2
    refs, hyps = short_reports(n, seed=5)
    (tmp_path / "refs.txt").write_text("\n".join(refs) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(hyps) + "\n")
    options = ["--metrics", "green", "--components", f"green={green}"]
    options += [
        "--option",
        "green.summary=false",
        "--option",
        "green.max_new_tokens=24",
        "--option",
        "green.batch_size=2",
    ]
    whole = subprocess.run(
        command(tmp_path, "whole", ["--chunk-size", str(chunk), *options]), capture_output=True, env=ENV
    )
    assert whole.returncode == 0, whole.stderr[-3000:]
    starts = killed_three_times_then_resumed(tmp_path, options, chunk, n, seed=7)
    assert f"a new run of {n} pairs" in starts[0]
    check_resumes(starts, chunk)
    assert_same_outputs(tmp_path, n)
