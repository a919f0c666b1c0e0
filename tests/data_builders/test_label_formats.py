"""Readers and writers of users' label formats: write -> read gives the same records, and every bad record is
named by file and line."""

from __future__ import annotations

import pytest

from radmetrics.data_builders.labels.brat import read_brat, write_brat
from radmetrics.data_builders.labels.chexpert_csv import read_chexpert_csv, write_chexpert_csv
from radmetrics.data_builders.labels.conll import read_conll, write_conll
from radmetrics.data_builders.labels.problems import LabelFileError, Problems
from radmetrics.data_builders.labels.radgraph_json import read_radgraph_json, write_radgraph_json
from radmetrics.data_builders.labels.token_jsonl import read_token_jsonl, write_token_jsonl
from radmetrics.data_builders.labels.token_records import ner_record
from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

NER = [
    ner_record("r1#0", "r1", ["No", "pleural", "effusion", "."], [[1, 2, "NON-ABNORMALITY"]], None),
    ner_record("r1#1", "r1", ["Heart", "is", "enlarged", "."], [[0, 0, "ANATOMY"], [2, 2, "ABNORMALITY"]], None),
    ner_record("r2#0", "r2", ["Left", "lung", "lung", "nodule"], [[0, 1, "ANATOMY"], [2, 3, "DEVICE"]], None),
]
GRAPH = [
    {
        "doc_key": "doc1",
        "sentences": [["Small", "left", "effusion", "."]],
        "ner": [[[0, 0, "OBS-DP"], [1, 1, "ANAT-DP"], [2, 2, "OBS-DP"]]],
        "relations": [[[0, 0, 2, 2, "modify"], [2, 2, 1, 1, "located_at"]]],
    },
    {"doc_key": "doc2", "sentences": [["No", "edema", "."]], "ner": [[[1, 1, "OBS-DA"]]], "relations": [[]]},
]


def strip(records):
    return [{k: v for k, v in r.items() if k != "_source"} for r in records]


def read_clean(reader, path):
    problems = Problems()
    records = reader(path, problems)
    assert not problems.found, [str(p) for p in problems.found]
    return strip(records)


def test_conll_round_trip(tmp_path):
    write_conll(NER, tmp_path / "a.conll")
    assert read_clean(read_conll, tmp_path / "a.conll") == NER


@pytest.mark.parametrize("form", ["tags", "spans", "text"])
def test_token_jsonl_round_trip(tmp_path, form):
    write_token_jsonl(NER, tmp_path / "a.jsonl", form)
    assert read_clean(read_token_jsonl, tmp_path / "a.jsonl") == NER


def test_radgraph_json_round_trip(tmp_path):
    write_radgraph_json(GRAPH, tmp_path / "a.json")
    assert read_clean(read_radgraph_json, tmp_path / "a.json") == GRAPH


def test_brat_round_trip(tmp_path):
    write_brat(GRAPH, tmp_path)
    assert read_clean(lambda p, problems: read_brat([p], problems), tmp_path) == GRAPH


def test_chexpert_csv_round_trip(tmp_path):
    labels = dict.fromkeys(CHEXPERT_CONDITIONS)
    records = [
        {"id": "a", "text": "Heart is enlarged,\nno effusion.", "labels": {**labels, "Cardiomegaly": 1, "Edema": 0}},
        {"id": "b", "text": "Normal.", "labels": {**labels, "No Finding": 1, "Pneumonia": -1}, "split": "test"},
    ]
    write_chexpert_csv(records, tmp_path / "a.csv")
    expected = [{**records[0], "split": None}, records[1]]
    found = read_clean(read_chexpert_csv, tmp_path / "a.csv")
    assert [{**r, "split": r.get("split")} for r in found] == expected


def test_iob1_reads_as_iob2(tmp_path):
    (tmp_path / "a.conll").write_text("-DOCSTART- r\nleft I-ANATOMY\nlung I-ANATOMY\nclear I-NON-ABNORMALITY\n")
    (record,) = read_clean(read_conll, tmp_path / "a.conll")
    assert record["ner_tags"] == ["B-ANATOMY", "I-ANATOMY", "B-NON-ABNORMALITY"]
    assert record["spans"] == [[0, 1, "ANATOMY"], [2, 2, "NON-ABNORMALITY"]]


def test_every_bad_record_is_named_by_file_and_line(tmp_path):
    conll = tmp_path / "a.conll"
    conll.write_text("-DOCSTART- r1\nNo O\neffusion X-THING\n\n-DOCSTART- r2\n\n-DOCSTART- r3\nlung\nclear O\n")
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text(
        '{"text": "Small effusion.", "spans": [[0, 3, "ABNORMALITY"]]}\n'
        "not json\n"
        '{"tokens": ["a"], "ner_tags": ["O", "O"]}\n'
        '{"tokens": ["a", "b"], "spans": [[0, 1, "X"]]}\n'
        '{"tokens": ["a"], "ner_tags": [3]}\n'
        '{"tokens": ["a"], "ner_tags": ["O"], "split": "holdout"}\n'
    )
    problems = Problems()
    read_conll(conll, problems)
    read_token_jsonl(jsonl, problems)
    where = [(p.path.rsplit("/", 1)[-1], p.line, p.kind) for p in problems.found]
    assert where == [
        ("a.conll", 3, "malformed"),
        ("a.conll", 5, "empty_document"),
        ("a.conll", 8, "malformed"),
        ("b.jsonl", 1, "off_token_boundary"),
        ("b.jsonl", 2, "malformed"),
        ("b.jsonl", 3, "malformed"),
        ("b.jsonl", 5, "malformed"),
        ("b.jsonl", 6, "malformed"),
    ]
    with pytest.raises(LabelFileError) as refused:
        problems.refuse_or_count(drop=False, fix="fix them")
    assert "\n" not in str(refused.value) and "a.conll:3:" in str(refused.value) and "b.jsonl:3:" in str(refused.value)
    assert problems.refuse_or_count(drop=True, fix="")["dropped"] == {
        "empty_document": 1,
        "malformed": 6,
        "off_token_boundary": 1,
    }


def test_brat_discontinuous_and_off_boundary_spans_are_refused(tmp_path):
    (tmp_path / "r.txt").write_text("Small left effusion.")
    (tmp_path / "r.ann").write_text(
        "T1\tOBS-DP 0 5;11 19\tSmall effusion\nT2\tANAT-DP 6 9\tlef\nR1\tmodify Arg1:T1 Arg2:T9\nA1\tNeg T1\n"
    )
    problems = Problems()
    assert read_brat([tmp_path], problems) == []
    assert [(p.line, p.kind) for p in problems.found] == [
        (1, "discontinuous"),
        (2, "off_token_boundary"),
        (4, "malformed"),
    ]


def test_radgraph_relation_to_a_missing_entity_is_refused(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(
        '{"d": {"text": "No edema .", "entities": {"1": {"tokens": "edema", "label": "OBS-DA", "start_ix": 1, '
        '"end_ix": 1, "relations": [["modify", "7"]]}}}}'
    )
    problems = Problems()
    assert read_radgraph_json(path, problems) == []
    assert [(p.line, p.kind) for p in problems.found] == [(1, "bad_relation")]


def test_chexpert_csv_bad_values_and_missing_columns(tmp_path):
    header = "id,text," + ",".join(CHEXPERT_CONDITIONS)
    blank = "," * (len(CHEXPERT_CONDITIONS) - 1)
    path = tmp_path / "a.csv"
    path.write_text(f"{header}\na,Normal.,2{blank}\nb,,{blank}\nc,Fine.,{blank}0\n")
    problems = Problems()
    assert read_chexpert_csv(path, problems) == []
    assert [(p.line, p.kind) for p in problems.found] == [
        (2, "unknown_label"),
        (3, "empty_document"),
        (4, "unknown_label"),
    ]
    (tmp_path / "b.csv").write_text("id,text,Cardiomegaly\na,x,1\n")
    with pytest.raises(LabelFileError, match="lacks Enlarged Cardiomediastinum"):
        read_chexpert_csv(tmp_path / "b.csv", Problems())


def test_the_docs_five_line_examples_read_cleanly(tmp_path):
    """docs/bring-your-own-labels.md: each format's example reads without a problem."""
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "bring-your-own-labels.md").read_text(encoding="utf-8")
    conll, jsonl, radgraph, brat, csv_text = re.findall(r"```\n(.*?)```", doc, re.S)[:5]
    (tmp_path / "a.conll").write_text(conll)
    (tmp_path / "a.jsonl").write_text(jsonl)
    (tmp_path / "a.json").write_text(radgraph)
    brat_lines = brat.splitlines()
    (tmp_path / "NAME.txt").write_text(brat_lines[0].split(maxsplit=1)[1])
    (tmp_path / "NAME.ann").write_text("\n".join(line[11:] for line in brat_lines[1:]) + "\n")
    (tmp_path / "a.csv").write_text(csv_text)
    assert len(read_clean(read_conll, tmp_path / "a.conll")) == 1
    assert len(read_clean(read_token_jsonl, tmp_path / "a.jsonl")) == 5
    assert read_clean(read_radgraph_json, tmp_path / "a.json")[0]["relations"] == [
        [[0, 0, 2, 2, "modify"], [2, 2, 1, 1, "located_at"]]
    ]
    assert read_clean(lambda p, problems: read_brat([p], problems), tmp_path)[0]["relations"] == [
        [[2, 2, 1, 1, "located_at"]]
    ]
    assert len(read_clean(read_chexpert_csv, tmp_path / "a.csv")) == 4


def test_the_command_offers_every_format_the_importer_reads():
    from radmetrics.data_builders.labels.import_command import FORMAT_NAMES
    from radmetrics.data_builders.labels.importer import FORMATS

    assert FORMAT_NAMES == tuple(FORMATS)
