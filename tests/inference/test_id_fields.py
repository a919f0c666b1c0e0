"""Pairing by any id column (`--id-field`, `--ref-id-field`, `--hyp-id-field`), and never by position when only one
file has ids."""

import json

import pytest
from cli_args import score_args, score_in

from radmetrics.inference.cli import main
from radmetrics.inference.files.report_io import ReportFileError, pair_reports, read_reports


def write_mimic_style(tmp_path):
    """MIMIC-CXR-style files: study_id and subject_id columns, a report with a line break, candidates in another
    order."""
    (tmp_path / "refs.csv").write_text(
        'subject_id,study_id,report\n10,s50,"Mild cardiomegaly.\nNo effusion."\n'
        "11,s51,Lungs are clear.\n12,s52,Small left pleural effusion.\n"
    )
    (tmp_path / "hyps.csv").write_text(
        "study_id,findings\ns52,Small left pleural effusion.\ns50,Mild cardiomegaly.\ns51,Lungs are clear.\n"
    )


def test_score_pairs_by_study_id(tmp_path):
    write_mimic_style(tmp_path)
    assert (
        score_in(
            tmp_path,
            *"--hyp-field findings --id-field study_id --metrics rougeL --bootstrap 0".split(),
            refs="refs.csv",
            hyps="hyps.csv",
        )
        == 0
    )
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["s50", "s51", "s52"]
    assert [round(r["rougeL"], 3) for r in rows][1:] == [1.0, 1.0] and rows[0]["rougeL"] < 1.0


def test_a_missing_id_field_names_the_columns(tmp_path, capsys):
    write_mimic_style(tmp_path)
    with pytest.raises(ReportFileError, match=r"no id field 'dicom_id'; its fields: report, study_id, subject_id"):
        read_reports(tmp_path / "refs.csv", id_field="dicom_id", id_required=True)
    (tmp_path / "refs.txt").write_text("a\nb\n")
    with pytest.raises(ReportFileError, match="a .txt file"):
        read_reports(tmp_path / "refs.txt", id_field="study_id", id_required=True)
    assert (
        score_in(
            tmp_path,
            *("--hyp-field findings --ref-id-field study_id --hyp-id-field dicom_id --metrics rougeL").split(),
            refs="refs.csv",
            hyps="hyps.csv",
            out="o",
        )
        == 2
    )
    assert "no id field 'dicom_id'; its fields: findings, study_id" in capsys.readouterr().err


def test_one_file_with_ids_and_one_without_is_refused(tmp_path):
    with pytest.raises(ReportFileError, match="the references have ids but the candidates have none"):
        pair_reports(["a", "b"], ["1", "2"], ["b", "a"], None)
    (tmp_path / "refs.jsonl").write_text('{"id": "2", "report": "b"}\n{"id": "1", "report": "a"}\n')
    (tmp_path / "hyps.txt").write_text("a\nb\n")
    args = score_args(
        str(tmp_path / "refs.jsonl"),
        str(tmp_path / "hyps.txt"),
        str(tmp_path / "out"),
        "--metrics",
        "rougeL",
        "--bootstrap",
        "0",
    )
    assert main(args) == 2
    assert main([*args, "--id-field", ""]) == 0  # asked for in words: pair by position
