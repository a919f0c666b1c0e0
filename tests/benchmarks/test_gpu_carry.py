"""benchmarks/gpu/gpu_carry.py: files cut into parts that each fit a device call, stashed part by part, joined and
checked on the other side. (The whole device call, wheels and the tiny GREEN distillation included, is rehearsed on CPU
by benchmarks/gpu/rehearse_gpu_call.sh.)"""

import importlib.util
import json
import os

import pytest

from radmetrics.training.rehearsal import REPO

SCRIPT = REPO / "benchmarks" / "gpu" / "gpu_carry.py"


@pytest.fixture(scope="module")
def carry():
    spec = importlib.util.spec_from_file_location("gpu_carry", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def files(tmp_path):
    made = []
    for name, size in (("empty.bin", 0), ("small.whl", 300), ("large.whl", 2_500), ("pairs.tar.xz", 700)):
        path = tmp_path / "src" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(size))
        made.append(path)
    return made


def test_every_part_fits_its_capacity_and_the_pieces_cover_each_file_once(carry, files):
    parts = carry.plan_pieces(files, 1_000)
    assert len(parts) == 4  # 3,500 bytes in parts of 1,000
    assert all(sum(piece["length"] for piece in part) <= 1_000 for part in parts)
    for path in files:
        pieces = [p for part in parts for p in part if p["file"] == path.name]
        assert [p["offset"] for p in pieces] == sorted(p["offset"] for p in pieces)
        assert sum(p["length"] for p in pieces) == path.stat().st_size
        assert all(a["offset"] + a["length"] == b["offset"] for a, b in zip(pieces, pieces[1:]))


def test_parts_received_one_by_one_join_into_the_same_bytes(carry, files, tmp_path):
    folders = carry.write_parts(files, tmp_path / "carry", 1_000, {"archives": {}})
    stash = tmp_path / "stash"
    for folder in folders:
        carry.receive(folder, stash)
    joined = carry.join_files(stash, tmp_path / "joined")
    assert {p.name: p.read_bytes() for p in joined} == {p.name: p.read_bytes() for p in files}


def test_a_missing_part_is_named_and_a_corrupted_piece_refused(carry, files, tmp_path):
    folders = carry.write_parts(files, tmp_path / "carry", 1_000, {"archives": {}})
    stash = tmp_path / "stash"
    for folder in folders[:1] + folders[2:]:
        carry.receive(folder, stash)
    with pytest.raises(SystemExit, match=r"lacks part\(s\) \[2\] of 4"):
        carry.join_files(stash, tmp_path / "joined")
    carry.receive(folders[1], stash)
    piece = json.loads((stash / "manifest.json").read_text())["pieces"][1][0]["name"]
    data = bytearray((stash / piece).read_bytes())
    data[0] ^= 0xFF
    (stash / piece).write_bytes(bytes(data))
    with pytest.raises(SystemExit, match="sha256"):
        carry.join_files(stash, tmp_path / "joined")
