"""`radmetrics data annotate` and `data pairs` write their records in chunks to OUT/records.stream.jsonl and follow
the one policy for an existing --out folder (data_builders/record_stream.py; issue 62, item 4): the same command run
again resumes after the last complete chunk and says from where, a finished run or a run of other inputs or options
is refused in one line (exit 2) unless --overwrite, and the outputs are those of one uninterrupted run."""

import json

import pytest

from radmetrics.data_builders.record_stream import STREAM_NAME
from radmetrics.inference.cli import main

pytest.importorskip("datasets", reason="radmetrics data writes Hugging Face datasets: the train extra")

PUBLISHED = ("annotations.jsonl", "stats.json")
REFERENCES = [
    "Heart size is normal. No pleural effusion.",
    "Large right pneumothorax. Heart size is normal.",
    "Mild cardiomegaly. Lungs are clear.",
    "Calcified granuloma in the left upper lobe. No pneumothorax.",
    "Small left pleural effusion. No consolidation.",
]


def write_pairs(path, n=9):
    rows = [
        {"id": f"p{i}", "reference": REFERENCES[i % 5], "candidate": REFERENCES[(i + 1) % 5] if i % 3 else ""}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def annotate(pairs, out, *options) -> int:
    command = ["data", "annotate", "--pairs", str(pairs), "--units", "statements", "--split-by", "none"]
    return main([*command, "--chunk-size", "2", *options, "--out", str(out)])


def stream_indices(folder) -> list[int]:
    lines = (folder / STREAM_NAME).read_text().splitlines()
    return [json.loads(line)["i"] for line in lines if line.startswith('{"i"')]


def one_error_line(capsys) -> str:
    [line] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("radmetrics data: error:")]
    return line


def test_annotate_resumes_a_limited_run_and_refuses_a_finished_or_other_run(tmp_path, capsys):
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    assert annotate(pairs, tmp_path / "whole") == 0
    assert "a new run of 9 pairs in chunks of 2" in capsys.readouterr().err
    assert annotate(pairs, tmp_path / "resumed", "--limit", "4") == 0  # the first two chunks of the same run
    assert annotate(pairs, tmp_path / "resumed", "--quoted") == 2  # another option: refused, nothing changed
    assert "holds a run of other inputs or options (options.quoted differs)" in one_error_line(capsys)
    assert annotate(pairs, tmp_path / "resumed") == 0
    err = capsys.readouterr().err
    assert "resuming: 4 of 9 pairs done in 2 complete chunk(s) of 2; continuing from pair 5" in err
    assert stream_indices(tmp_path / "resumed") == list(range(9))  # no pair annotated twice
    for name in PUBLISHED:
        assert (tmp_path / "resumed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert annotate(pairs, tmp_path / "resumed") == 2  # finished: refused unless --overwrite
    assert "holds a finished run: pass --overwrite to replace it" in one_error_line(capsys)
    assert annotate(pairs, tmp_path / "resumed", "--quoted", "--overwrite") == 0
    assert "a new run of 9 pairs" in capsys.readouterr().err
    assert '"quoted": true' in (tmp_path / "resumed" / STREAM_NAME).read_text().splitlines()[0]


def test_annotate_refuses_a_folder_holding_another_runs_outputs_or_other_inputs(tmp_path, capsys):
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "annotations.jsonl").write_text("{}\n")
    assert annotate(pairs, foreign) == 2
    assert "holds the outputs of another run" in one_error_line(capsys)
    assert (foreign / "annotations.jsonl").read_text() == "{}\n" and not (foreign / STREAM_NAME).exists()
    assert annotate(pairs, tmp_path / "run", "--limit", "2") == 0
    write_pairs(pairs, n=8)  # the input changed under the run
    assert annotate(pairs, tmp_path / "run") == 2
    assert "holds a run of other inputs or options (inputs." in one_error_line(capsys)


def data_pairs(out, *options) -> int:
    command = ["data", "pairs", "--heuristics", "random", "remove_shuffle", "--per-heuristic", "12"]
    return main([*command, "--chunk-size", "5", *options, "--out", str(out)])


def test_data_pairs_refuses_a_finished_run_before_building_and_overwrites_to_the_same_bytes(tmp_path, capsys):
    out = tmp_path / "pairs"
    assert data_pairs(out) == 0
    assert "a new run of 24 pairs in chunks of 5" in capsys.readouterr().err
    first = {name: (out / name).read_bytes() for name in ("train.jsonl", "stats.json", "README.md")}
    assert stream_indices(out) == list(range(24))
    assert data_pairs(out) == 2
    assert "holds a finished run" in one_error_line(capsys)
    assert data_pairs(out, "--seed", "1") == 2  # refused on its options before the corpus is read
    assert "holds a finished run" in one_error_line(capsys)
    assert data_pairs(out, "--overwrite") == 0
    assert {name: (out / name).read_bytes() for name in first} == first
