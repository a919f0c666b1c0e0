"""Bad input to `radmetrics score` and `compare`: a clear error naming the file and line, never a traceback, and files
paired by id when both carry ids."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radmetrics.inference.cli import main
from radmetrics.inference.files.report_io import MAX_REPORT_CHARS, ReportFileError, pair_reports, read_reports

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def score(tmp_path, refs, hyps, *extra):
    return main(["score", "--refs", refs, "--hyps", hyps, "--bootstrap", "10", "--out", str(tmp_path / "out"), *extra])


def test_files_with_ids_pair_by_id(tmp_path, capsys):
    refs = write(
        tmp_path / "refs.jsonl", [{"id": "a", "report": "Mild cardiomegaly."}, {"id": "b", "report": "No effusion."}]
    )
    hyps = write(
        tmp_path / "hyps.jsonl", [{"id": "b", "report": "No effusion."}, {"id": "a", "report": "Mild cardiomegaly."}]
    )
    assert score(tmp_path, refs, hyps, "--metrics", "bleu4,rougeL") == 0  # commas as well as spaces
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()]
    assert [(r["id"], r["rougeL"]) for r in rows] == [("a", 1.0), ("b", 1.0)]


@pytest.mark.parametrize(
    "hyp_records, message",
    [
        (
            [{"id": "a", "report": "x"}, {"id": "c", "report": "y"}],
            (
                "1 id\\(s\\) of the references have no candidate \\(b\\); "
                "1 id\\(s\\) of the candidates are not among the references \\(c\\)"
            ),
        ),
        ([{"id": "a", "report": "x"}, {"id": "a", "report": "y"}], "id\\(s\\) a appear more than once"),
        ([{"id": "a", "report": "x"}, {"report": "y"}], "1 record\\(s\\) have no id while the others do, e.g. line 2"),
        ([{"id": "a", "report": "x"}, {"id": "b", "report": None}], "line 2: field 'report' is null"),
        ([{"id": "a", "report": "x"}, {"id": "b", "report": 7}], "line 2: field 'report' is int, not a string"),
    ],
)
def test_bad_records_are_named(tmp_path, capsys, hyp_records, message):
    refs = write(
        tmp_path / "refs.jsonl", [{"id": "a", "report": "Mild cardiomegaly."}, {"id": "b", "report": "No effusion."}]
    )
    hyps = write(tmp_path / "hyps.jsonl", hyp_records)
    assert score(tmp_path, refs, hyps, "--metrics", "bleu2") == 2
    error = capsys.readouterr().err
    assert error.startswith("radmetrics score: error:") and "Traceback" not in error
    assert pytest.importorskip("re").search(message, error), error


def test_text_files_name_empty_and_oversized_lines(tmp_path):
    (tmp_path / "gap.txt").write_text("Mild cardiomegaly.\n\nNo effusion.\n")
    with pytest.raises(ReportFileError, match="gap.txt: line 2: the report is empty"):
        read_reports(tmp_path / "gap.txt")
    (tmp_path / "huge.txt").write_text("ok\n" + "x" * (MAX_REPORT_CHARS + 1) + "\n")
    with pytest.raises(ReportFileError, match="huge.txt: line 2 holds 100,001 characters"):
        read_reports(tmp_path / "huge.txt")
    with pytest.raises(ReportFileError, match="2 references but 1 candidates"):
        pair_reports(["a", "b"], None, ["a"], None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.one_of(
        st.binary(max_size=300), st.text(max_size=300).map(lambda s: s.encode("utf-8", "surrogatepass"))
    ),
    suffix=st.sampled_from([".txt", ".csv", ".jsonl", ".json"]),
)
def test_readers_refuse_bad_files_with_a_message(tmp_path, content, suffix):
    """Whatever the bytes, a reader returns non-empty reports or raises ReportFileError, nothing else."""
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(content)
    try:
        reports, ids = read_reports(path)
    except ReportFileError:
        return
    assert all((isinstance(r, str) and r.strip()) or isinstance(r, list) for r in reports)
    assert ids is None or (len(ids) == len(reports) == len(set(ids)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=200))
def test_score_cli_never_shows_a_traceback(tmp_path, capsys, content):
    (tmp_path / "refs.jsonl").write_bytes(content)
    (tmp_path / "hyps.txt").write_text("Mild cardiomegaly.\n")
    code = score(tmp_path, str(tmp_path / "refs.jsonl"), str(tmp_path / "hyps.txt"), "--metrics", "bleu2")
    assert code in (0, 2) and "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('study_id,report\ns100,"Heart normal.\ns101,Small effusion.\n', "line 2: a quoted field opened on this line"),
        (
            "study_id,report\ns100,Heart normal.\ns101,Small, left effusion.\n",
            "line 3: 3 fields where the header has 2",
        ),
        ('study_id,report\ns100,"Heart" normal.\n', "line 2: "),
    ],
)
def test_a_malformed_csv_is_refused_naming_its_line(tmp_path, text, message):
    from radmetrics.inference.files.report_io import ReportFileError, read_reports

    (tmp_path / "refs.csv").write_text(text)
    with pytest.raises(ReportFileError, match=message):
        read_reports(tmp_path / "refs.csv", "report", "study_id")


def test_a_multi_line_quoted_report_is_one_row_and_errors_name_the_line_it_starts_on(tmp_path):
    from radmetrics.inference.files.report_io import ReportFileError, read_reports

    (tmp_path / "refs.csv").write_text('id,report\na,"Line one.\nLine two."\nb,\n')
    with pytest.raises(ReportFileError, match="line 4"):
        read_reports(tmp_path / "refs.csv", "report")
    (tmp_path / "refs.csv").write_text('id,report\na,"Line one.\nLine two."\nb,Fine.\n')
    assert read_reports(tmp_path / "refs.csv", "report") == (["Line one.\nLine two.", "Fine."], ["a", "b"])


@pytest.mark.parametrize(
    ("refs", "hyps", "message"),
    [
        ("study_id,report\ns1,A.\ns2,B.\n", "study_id,report\ns2,B.\ns1,A.\n", "--id-field study_id"),
        ("study_id,report\ns1,A.\n", "dicom_id,report\nd1,A.\n", "--ref-id-field study_id --hyp-id-field dicom_id"),
        ("study_id,report\ns1,A.\n", None, "--id-field ''"),
    ],
)
def test_files_with_ids_under_another_name_are_never_paired_by_position_silently(
    tmp_path, capsys, refs, hyps, message
):
    from cli_args import score_args

    (tmp_path / "refs.csv").write_text(refs)
    hyp_file = tmp_path / ("hyps.csv" if hyps else "hyps.txt")
    hyp_file.write_text(hyps or "A.\n")
    assert main(score_args(tmp_path / "refs.csv", hyp_file, tmp_path / "out", "--metrics", "rougeL")) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_both_files_with_id_pair_by_it_and_a_named_field_pairs_by_position_when_empty(tmp_path):
    from cli_args import score_args

    from radmetrics.inference.cli import main

    (tmp_path / "refs.csv").write_text("id,study_id,report\n1,s1,Heart normal.\n2,s2,Small effusion.\n")
    (tmp_path / "hyps.csv").write_text("id,study_id,report\n2,s2,Small effusion.\n1,s1,Heart normal.\n")
    assert main(score_args(tmp_path / "refs.csv", tmp_path / "hyps.csv", tmp_path / "a", "--metrics", "rougeL")) == 0
    rows = [json.loads(line) for line in (tmp_path / "a" / "per_sample.jsonl").read_text().splitlines()]
    assert [r["rougeL"] for r in rows] == [1.0, 1.0]
    (tmp_path / "hyps.txt").write_text("Heart normal.\nSmall effusion.\n")
    out = tmp_path / "b"
    assert (
        main(score_args(tmp_path / "refs.csv", tmp_path / "hyps.txt", out, "--metrics", "rougeL", "--id-field", ""))
        == 0
    )


def test_a_closed_pipe_ends_the_listing_quietly():
    """`radmetrics score --list | head`: the reader has gone; no traceback, exit 0."""
    import subprocess
    import sys

    code = (
        "import os, sys; r, w = os.pipe(); os.close(r); os.dup2(w, 1); "
        "from radmetrics.inference.cli import main; sys.exit(main(['score', '--list']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
