"""Pairs read a chunk at a time (files/pair_stream.py) are the pairs `read_reports` + `pair_reports` give, and a bad
file gets the same one-line error."""

import json

import pytest

from radmetrics.inference.files.pair_stream import InMemoryPairs, ReportSide, StreamedPairs, streamed_pairs
from radmetrics.inference.files.report_io import ReportFileError, pair_reports, read_reports

TEXTS = [
    "Heart size is normal.\u2028Lungs are clear.",
    "No effusion.\fNo pneumothorax.",
    "Mild cardiomegaly \u00e9 \u0085 end.",
    "Small left pleural effusion.",
    "Lungs are clear.",
]


def sides(refs, hyps, id_field="id", named=False):
    return (
        ReportSide(refs, None, id_field, False, named),
        ReportSide(hyps, None, id_field, True, named),
    )


def whole(refs, hyps, id_field="id", named=False):
    a = read_reports(refs, None, id_field, id_required=named)
    b = read_reports(hyps, None, id_field, allow_empty=True, id_required=named)
    return pair_reports(*a, *b)


def check_same(refs, hyps, **kwargs):
    pairs = streamed_pairs(*sides(refs, hyps, **kwargs))
    assert isinstance(pairs, StreamedPairs)
    references, candidates, ids = whole(refs, hyps, **kwargs)
    assert pairs.chunk(0, len(pairs)) == (references, candidates) and pairs.ids == ids
    assert pairs.chunk(1, 3) == (references[1:3], candidates[1:3])
    assert pairs.texts([4, 0]) == ([references[4], references[0]], [candidates[4], candidates[0]])
    assert pairs.empty == sum(not c.strip() for c in candidates if isinstance(c, str))
    return pairs


def test_txt_files_stream_as_report_io_reads_them(tmp_path):
    (tmp_path / "r.txt").write_bytes(("\ufeff" + "\r\n".join(TEXTS) + "\r\n").encode())
    (tmp_path / "h.txt").write_bytes("\n".join([TEXTS[1], "", TEXTS[0], " ", TEXTS[2]]).encode())  # no final newline
    pairs = check_same(tmp_path / "r.txt", tmp_path / "h.txt")
    assert pairs.ids is None and pairs.empty == 2


def test_jsonl_files_pair_by_id_in_another_order(tmp_path):
    refs = [{"id": f"s{i}", "report": t} for i, t in enumerate(TEXTS)]
    hyps = [{"id": f"s{i}", "report": TEXTS[(i + 1) % 5]} for i in (3, 1, 4, 0, 2)]
    hyps[2]["report"] = [{"text": "Grounded finding.", "boxes": [[0, 0, 1, 1]]}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in refs) + "\n\n")
    (tmp_path / "h.jsonl").write_text("\n" + "\n".join(json.dumps(h) for h in hyps) + "\n")
    pairs = check_same(tmp_path / "r.jsonl", tmp_path / "h.jsonl")
    assert pairs.ids == [f"s{i}" for i in range(5)] and pairs.grounded


def test_csv_and_json_files_are_read_whole(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(TEXTS))
    (tmp_path / "h.txt").write_text("\n".join(TEXTS) + "\n")
    pairs = streamed_pairs(*sides(tmp_path / "r.json", tmp_path / "h.txt"))
    assert isinstance(pairs, InMemoryPairs) and pairs.chunk(0, 5) == (TEXTS, TEXTS)


@pytest.mark.parametrize(
    "refs, hyps",
    [
        (b"a\n\xff b\n", b"a\nb\n"),  # not UTF-8
        (b"a\n \nc\n", b"a\nb\nc\n"),  # an empty reference
        (b"a\nb\n", b"a\nb\nc\n"),  # by position, not as many
        (b"", b"a\n"),  # no reports
    ],
)
def test_bad_txt_files_get_report_ios_error(tmp_path, refs, hyps):
    (tmp_path / "r.txt").write_bytes(refs)
    (tmp_path / "h.txt").write_bytes(hyps)
    with pytest.raises(ReportFileError) as streamed:
        streamed_pairs(*sides(tmp_path / "r.txt", tmp_path / "h.txt"))
    if refs:
        with pytest.raises(ReportFileError) as read:
            whole(tmp_path / "r.txt", tmp_path / "h.txt")
        assert str(streamed.value) == str(read.value)
    else:
        assert "r.txt: no reports in the file" in str(streamed.value)


@pytest.mark.parametrize(
    "hyps",
    [
        ['{"id": "a", "report": "x"}', '{"id": "a", "report": "y"}'],  # a repeated id
        ['{"id": "a", "report": "x"}', '{"report": "y"}'],  # an id missing
        ['{"id": "a", "report": "x"}', '{"id": "c", "report": "y"}'],  # an id not among the references
        ['{"id": "a", "report": "x"}', '{"id": "b", "text": null}'],  # a null report
        ['{"id": "a", "report": "x"}', "{not json"],
        ['{"id": "a"}', '{"id": "b", "report": "y"}'],  # no report field
    ],
)
def test_bad_jsonl_files_get_report_ios_error(tmp_path, hyps):
    (tmp_path / "r.jsonl").write_text('{"id": "a", "report": "r1"}\n{"id": "b", "report": "r2"}\n')
    (tmp_path / "h.jsonl").write_text("\n".join(hyps) + "\n")
    with pytest.raises(ReportFileError) as streamed:
        streamed_pairs(*sides(tmp_path / "r.jsonl", tmp_path / "h.jsonl"))
    with pytest.raises(ReportFileError) as read:
        whole(tmp_path / "r.jsonl", tmp_path / "h.jsonl")
    assert str(streamed.value) == str(read.value)


def test_a_named_id_field_a_txt_file_lacks_gets_report_ios_error(tmp_path):
    (tmp_path / "r.txt").write_text("a\n")
    (tmp_path / "h.txt").write_text("a\n")
    with pytest.raises(ReportFileError, match="a .txt file .* has no id field 'study_id'"):
        streamed_pairs(*sides(tmp_path / "r.txt", tmp_path / "h.txt", id_field="study_id", named=True))
