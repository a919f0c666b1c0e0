import hashlib
import json

import pytest

from radmetrics.data_builders.corpus.corpora import (
    CorpusError,
    bundled_path,
    load_section_titles,
    parse_free_text_report,
    read_free_text_reports,
    read_rexrank_split,
    read_table,
)


def test_bundled_copies_are_unmodified(test_data):
    upstream = json.loads((test_data / "upstream_sha256.json").read_text())
    for name, digest in upstream.items():
        assert hashlib.sha256(bundled_path(*name.split("/")).read_bytes()).hexdigest() == digest, name
    assert bundled_path("iu_xray", "ATTRIBUTION.md").is_file()


def test_iu_corpus(iu_reports):
    assert 3700 < len(iu_reports) <= 3851
    assert all(r.text for r in iu_reports)
    splits = {r.split for r in iu_reports}
    assert splits == {"train", "validation", "test"}
    first = next(r for r in iu_reports if r.id == "1")
    assert first.findings.startswith("The cardiac silhouette") and first.impression == "Normal chest x-XXXX."


def test_rexrank_split_ids():
    test = read_rexrank_split(bundled_path("iu_xray", "rexrank_iu_xray_test.json"))
    assert len(test) == 590 and all(r.split == "test" for r in test)
    assert all(r.id.isdigit() for r in test)


def test_free_text_sections(test_data):
    titles = load_section_titles()
    report = read_free_text_reports(test_data / "negbio" / "00000086.txt")[0]
    assert report.findings.startswith("pa and lat cxr") and report.impression.startswith("stable chest")
    mimic = parse_free_text_report(
        "x",
        "FINAL REPORT\nINDICATION: cough.\n\nFINDINGS: Lungs are clear.\nNo effusion.\n\nIMPRESSION: No acute"
        " process.",
        titles,
    )
    assert mimic.findings == "Lungs are clear. No effusion." and mimic.impression == "No acute process."


def test_table_reader_and_errors(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"rid": "a", "body": "Lungs clear."}) + "\n")
    reports = read_table(path, id_column="rid", text_column="body")
    assert reports[0].id == "a" and reports[0].text == "Lungs clear."
    with pytest.raises(CorpusError, match="body2"):
        read_table(path, id_column="rid", text_column="body2")
    csv_path = tmp_path / "r.csv"
    csv_path.write_text("id,findings\n1,Clear.\n")
    with pytest.raises(CorpusError, match="impression"):
        read_table(csv_path)
    with pytest.raises(CorpusError, match="not found"):
        read_table(tmp_path / "missing.csv")
