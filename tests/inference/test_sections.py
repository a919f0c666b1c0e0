"""`--ref-field findings+impression`: sections of a MIMIC-style CSV joined as written (report_io.joined_sections)."""

import json

import pytest
from cli_args import score_in

from radmetrics.inference.files.report_io import ReportFileError, joined_sections, read_reports

MIMIC_STYLE = (
    "subject_id,study_id,findings,impression\n"
    '10,s50,"Heart size is mildly enlarged.\nNo effusion.","Mild cardiomegaly."\n'
    "11,s51,Lungs are clear.,\n"
    '12,s52,,"  No acute process.\r\n"\n'
)


def test_sections_are_joined_as_written(tmp_path):
    (tmp_path / "refs.csv").write_text(MIMIC_STYLE, newline="")
    reports, ids = read_reports(tmp_path / "refs.csv", "findings+impression", "study_id")
    assert ids == ["s50", "s51", "s52"]
    assert reports == [
        "Heart size is mildly enlarged.\nNo effusion.\nMild cardiomegaly.",
        "Lungs are clear.",  # an empty impression is left out, not joined as a blank line
        "  No acute process.\r\n",  # every character of a section kept
    ]
    assert read_reports(tmp_path / "refs.csv", "impression+findings", "study_id")[0][0] == (
        "Mild cardiomegaly.\nHeart size is mildly enlarged.\nNo effusion."
    )
    # the same in Python, on records
    assert joined_sections({"findings": "A.", "impression": "B."}, "findings+impression") == "A.\nB."
    assert joined_sections({"a+b": "as named"}, "a+b") == "as named"  # a column named a+b is that column


def test_a_missing_section_or_an_empty_join_is_refused(tmp_path):
    (tmp_path / "refs.csv").write_text(MIMIC_STYLE.replace("impression", "impressions"), newline="")
    with pytest.raises(ReportFileError, match=r"line 2 has no field 'impression'"):
        read_reports(tmp_path / "refs.csv", "findings+impression", "study_id")
    (tmp_path / "empty.jsonl").write_text(json.dumps({"id": "1", "findings": "", "impression": None}) + "\n")
    with pytest.raises(ReportFileError, match=r"fields 'findings\+impression' joined is empty"):
        read_reports(tmp_path / "empty.jsonl", "findings+impression")
    assert read_reports(tmp_path / "empty.jsonl", "findings+impression", allow_empty=True)[0] == [""]


def test_score_findings_and_impression_together(tmp_path):
    (tmp_path / "refs.csv").write_text(MIMIC_STYLE, newline="")
    (tmp_path / "hyps.csv").write_text(
        'study_id,findings,impression\ns51,Lungs are clear.,\ns50,"Heart size is mildly enlarged.\nNo effusion.",'
        "Mild cardiomegaly.\ns52,No acute process.,\n",
        newline="",
    )
    options = "--ref-field findings+impression --hyp-field findings+impression --id-field study_id --metrics rougeL"
    assert score_in(tmp_path, *options.split(), "--bootstrap", "0", refs="refs.csv", hyps="hyps.csv") == 0
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()]
    assert [(r["id"], r["rougeL"]) for r in rows] == [("s50", 1.0), ("s51", 1.0), ("s52", 1.0)]
    assert score_in(tmp_path, *options.replace("+impression", "").split(), refs="refs.csv", hyps="hyps.csv") == 2
