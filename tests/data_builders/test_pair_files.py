"""`radmetrics data annotate` reads a user's CSV or JSONL pairs and splits them by reference report, refusing given
splits that leak (data_builders/pairs/pair_files.py)."""

import json

import pytest

from radmetrics.data_builders.pairs.pair_files import (
    PairFileError,
    assign_pair_splits,
    read_pair_files,
    write_split_files,
)


def write_csv_pairs(path, n=60, split=None):
    rows = ["study_id,findings,impression,generated" + (",split" if split else "")]
    for i in range(n):
        reference = f'"Finding number {i // 2} is seen.\nNo effusion."'  # two pairs per reference report
        extra = f",{split(i)}" if split else ""
        rows.append(f"s{i},{reference},Impression {i // 2}.,Candidate {i}.{extra}")
    path.write_text("\n".join(rows) + "\n")


def test_csv_pairs_are_split_by_reference_report(tmp_path):
    write_csv_pairs(tmp_path / "pairs.csv")
    pairs = read_pair_files([str(tmp_path / "pairs.csv")], "findings+impression", "generated")
    assert pairs[0]["id"] == "0" and pairs[0]["study_id"] == "s0"
    assert pairs[0]["reference"] == "Finding number 0 is seen.\nNo effusion.\nImpression 0."
    assert pairs[0]["candidate"] == "Candidate 0."
    split, stats = assign_pair_splits(pairs)
    assert stats["split_by"] == "reference" and sum(stats["per_split"].values()) == 60
    by_reference = {}
    for pair in split:
        by_reference.setdefault(pair["reference"], set()).add(pair["split"])
    assert all(len(splits) == 1 for splits in by_reference.values())  # a report's pairs share a split
    assert all(v.get("reports_in_train", 0) == 0 for v in stats["split_overlap"]["per_split"].values())
    counts = write_split_files(split, tmp_path / "out", stats)
    assert counts == stats["per_split"]
    for name in ("train", "validation", "test"):
        rows = (tmp_path / "out" / f"{name}.jsonl").read_text().splitlines()
        assert len(rows) == counts[name] and all(json.loads(r)["split"] == name for r in rows)
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["split_by"] == "reference"


def test_given_splits_that_leak_or_are_partial_are_refused(tmp_path):
    write_csv_pairs(tmp_path / "leaky.csv", split=lambda i: ("train", "test")[i % 2])  # a report in both splits
    pairs = read_pair_files([str(tmp_path / "leaky.csv")], "findings", "generated")
    with pytest.raises(PairFileError, match=r"the given splits leak: 30 test reference report\(s\) repeat a training"):
        assign_pair_splits(pairs)
    assert assign_pair_splits(pairs, "reference")[1]["split_by"] == "reference"
    write_csv_pairs(tmp_path / "partial.csv", split=lambda i: "dev" if i < 3 else "")
    partial = read_pair_files([str(tmp_path / "partial.csv")], "findings", "generated")
    assert partial[0]["split"] == "validation" and "split" not in partial[3]
    with pytest.raises(PairFileError, match="3 of 60 pairs have a split and the others none"):
        assign_pair_splits(partial)


def test_bad_pair_files_are_refused_in_one_line(tmp_path):
    write_csv_pairs(tmp_path / "pairs.csv", n=2)
    with pytest.raises(PairFileError, match=r"line 2 has no field 'reference' \(found \["):
        read_pair_files([str(tmp_path / "pairs.csv")])
    (tmp_path / "pairs.txt").write_text("a\n")
    with pytest.raises(PairFileError, match="from .csv or .jsonl files"):
        read_pair_files([str(tmp_path / "pairs.txt")])
    (tmp_path / "twice.jsonl").write_text(
        json.dumps({"id": "a", "reference": "R.", "candidate": ""})
        + "\n"
        + json.dumps({"id": "a", "reference": "S.", "candidate": "C."})
        + "\n"
    )
    with pytest.raises(PairFileError, match="line 2: id 'a' was already read"):
        read_pair_files([str(tmp_path / "twice.jsonl")])
