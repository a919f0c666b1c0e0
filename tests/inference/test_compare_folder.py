"""`radmetrics compare --out` follows the one policy for an existing folder (files/compare_folder.py): a comparison
is written whole, so a folder holding another run's outputs (a comparison or a score run) is refused in one line
before anything is scored, unless --overwrite, which replaces them."""

import pytest
from cli_args import compare_in, score_in

pytestmark = pytest.mark.core


def write_systems(folder):
    refs = ["Heart size is normal.", "No pleural effusion.", "Small left pneumothorax.", "Lungs are clear."]
    (folder / "refs.txt").write_text("\n".join(refs) + "\n")
    (folder / "a.txt").write_text("\n".join(refs[::-1]) + "\n")
    (folder / "b.txt").write_text("\n".join(refs) + "\n")


def test_compare_refuses_another_runs_folder_unless_overwrite(tmp_path, capsys, monkeypatch):
    write_systems(tmp_path)
    options = ["--metrics", "rougeL", "--bootstrap", "20", "--permutations", "20"]
    assert compare_in(tmp_path, *options) == 0
    first = (tmp_path / "cmp" / "compare.json").read_bytes()
    capsys.readouterr()

    def refuse(*args, **kwargs):
        raise AssertionError("a metric ran before --out was checked")

    with monkeypatch.context() as patched:
        patched.setattr("radmetrics.inference.metrics.base.Metric.__call__", refuse)
        assert compare_in(tmp_path, *options) == 2  # a finished comparison
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "holds the outputs of another run (compare.json)" in err
        assert "pass --overwrite to replace them" in err
    assert score_in(tmp_path, "--metrics", "rougeL", refs="refs.txt", hyps="a.txt", out="scored") == 0
    capsys.readouterr()
    assert compare_in(tmp_path, *options, out="scored") == 2  # a score run's folder
    assert "holds the outputs of another run (scores.stream.jsonl)" in capsys.readouterr().err
    assert compare_in(tmp_path, *options, "--overwrite", out="scored") == 0
    assert not (tmp_path / "scored" / "scores.stream.jsonl").exists()
    assert (tmp_path / "scored" / "compare.json").read_bytes() == first
    assert compare_in(tmp_path, *options, "--overwrite") == 0
    assert (tmp_path / "cmp" / "compare.json").read_bytes() == first
