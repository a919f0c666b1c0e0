"""Outputs checked at the door (`files/output_paths.py`) and published whole (`files/atomic.py`)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from radmetrics.inference.cli import main
from radmetrics.inference.files import atomic
from radmetrics.inference.files.output_paths import (
    OutputPathError,
    check_output_dir,
    check_output_file,
    ensure_output_dir,
    refuse_non_empty,
)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if atomic.TEMP_MARK in p.name)


def test_a_file_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "sub" / "result.json"
    atomic.write_text(target, "old")
    with pytest.raises(RuntimeError), atomic.atomic_write(target) as fh:
        fh.write("half of the new")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old" and leftovers(target.parent) == []
    atomic.write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and leftovers(target.parent) == []
    assert oct(target.stat().st_mode & 0o777) == oct(0o644 & ~_umask())


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_a_folder_replaces_the_old_one_whole_or_not_at_all(tmp_path):
    target = tmp_path / "export"
    with atomic.atomic_directory(target) as staging:
        (staging / "a.txt").write_text("1")
        assert not target.exists()  # nothing is visible before the block ends
    with pytest.raises(ValueError), atomic.atomic_directory(target) as staging:
        (staging / "b.txt").write_text("2")
        raise ValueError("failed build")
    assert sorted(p.name for p in target.iterdir()) == ["a.txt"]
    with atomic.atomic_directory(target) as staging:
        (staging / "b.txt").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == ["b.txt"] and leftovers(tmp_path) == []


def test_two_writers_never_share_a_temporary_name(tmp_path):
    target = tmp_path / "same.txt"
    with atomic.atomic_write(target) as first, atomic.atomic_write(target) as second:
        assert len(leftovers(tmp_path)) == 2  # two temporary siblings, each with its own name
        first.write("first")
        second.write("second")
    assert target.read_text() == "first"  # the outer block ends last: its file replaces the inner one's


def _build_counting(args) -> str:
    target, counter = args

    def build(staging: Path) -> None:
        with open(counter, "a") as fh:
            fh.write("built\n")
        (staging / "payload").write_text("done")

    atomic.built_once(target, build, lambda p: (p / "payload").is_file())
    return (Path(target) / "payload").read_text()


def test_two_processes_build_the_same_folder_once(tmp_path):
    target, counter = tmp_path / "cache" / "unpacked", tmp_path / "count.txt"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_build_counting, [(str(target), str(counter))] * 4) == ["done"] * 4
    assert counter.read_text() == "built\n"


def test_output_folders_are_created_or_refused_in_one_line(tmp_path):
    blocker = tmp_path / "hyps.txt"
    blocker.write_text("a report\n")
    assert ensure_output_dir(tmp_path / "new" / "deep").is_dir()
    with pytest.raises(OutputPathError, match=r"hyps.txt is a file, not a folder: give a path under a folder"):
        ensure_output_dir(blocker / "x")
    with pytest.raises(OutputPathError, match="is a file, not a folder: give a folder path"):
        ensure_output_dir(blocker)
    with pytest.raises(OutputPathError, match="is a folder: give a file path"):
        check_output_file(tmp_path)
    assert check_output_file(tmp_path / "made" / "weights.json") == tmp_path / "made" / "weights.json"
    assert not (tmp_path / "made").exists()  # checked, not made: a refused command leaves nothing behind
    assert check_output_dir(tmp_path / "later" / "deep") == tmp_path / "later" / "deep"
    assert not (tmp_path / "later").exists()
    with pytest.raises(OutputPathError, match=r"hyps.txt is a file, not a folder: give a path under a folder"):
        check_output_dir(blocker / "x" / "y")
    with pytest.raises(OutputPathError, match="exists and is not empty"):
        refuse_non_empty(tmp_path)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, which nobody (root included) writes")
def test_a_folder_that_cannot_be_written_is_refused():
    with pytest.raises(OutputPathError, match="--out /proc/radmetrics-out cannot be created"):
        ensure_output_dir("/proc/radmetrics-out")
    with pytest.raises(OutputPathError, match="--out /proc cannot be written"):
        ensure_output_dir("/proc")
    with pytest.raises(OutputPathError, match="--out /proc/radmetrics-out cannot be written"):
        check_output_dir("/proc/radmetrics-out")


@pytest.mark.parametrize(
    "argv",
    [
        ["meta-eval", "ranking", "--metrics", "rougeL", "--out", "{blocker}/x"],
        ["meta-eval", "fit-radcliq", "--csv", "{blocker}", "--out", "{folder}"],
        ["data", "corpus", "--out", "{blocker}/x"],
        ["export", "{folder}", "--out", "{folder}"],
        ["rehearse", "configs/green/sft/phi-2.yaml", "--workdir", "{blocker}"],
        ["train", "rate_ner/iob", "--config", "configs/rate_ner/iob/tiny.yaml", "--output_dir", "{blocker}/run"],
    ],
    ids=["meta-eval", "fit-radcliq-file", "data", "export-not-empty", "rehearse", "train"],
)
def test_every_command_checks_its_outputs_before_any_work(tmp_path, capsys, monkeypatch, argv):
    """One line, exit 2, and nothing of the command runs: no model, no data, no scoring."""
    import radmetrics.inference.cli as cli

    blocker = tmp_path / "hyps.txt"
    blocker.write_text("a report\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "something").write_text("x")
    argv = [a.format(blocker=blocker, folder=tmp_path / "folder") for a in argv]
    parser = cli.build_parser()
    if argv[0] != "train":  # train parses its recipe's own arguments: the recipe's parser checks output_dir

        def no_work(args):
            raise AssertionError("the command ran before its output path was checked")

        monkeypatch.setattr(cli, "build_parser", lambda: _with_run(parser, no_work))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if "error:" in line]) == 1 and "Traceback" not in "\n".join(err)
    assert any(part in err[-1] for part in ("is a file", "is a folder", "is not empty"))


def _with_run(parser, run):
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            for sub in action.choices.values():
                sub.set_defaults(_run=run)
    return parser
