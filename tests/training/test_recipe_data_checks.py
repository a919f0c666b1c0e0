"""Every recipe that reads a user's records checks them against its options before any tokenizer or model: the
encoder recipes' `--silver_dir` (another recipe's records, entities wider than max_span_width or past what
max_seq_length keeps), findings/classifier's silver records, green/pretrain's corpus; one line naming the fix, by
`radmetrics train`, by each recipe's `check_data` and by `radmetrics rehearse CONFIG -- --silver_dir DIR`
(issue 64, items 2 and 3). green/sft and crimson/sft: tests/training/test_user_pairs.py."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset, DatasetDict

from radmetrics.inference.cli import main as radmetrics
from radmetrics.inference.files.report_io import ReportFileError
from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
from radmetrics.training.common.record_checks import RecordFormatError
from radmetrics.training.recipes import load_recipe
from radmetrics.training.rehearsal import REPO, RehearsalError, rehearse

SPLITS = ("train", "validation", "test")


def save(root, labeler: str, rows: list[dict]) -> None:
    DatasetDict({s: Dataset.from_list(rows) for s in SPLITS}).save_to_disk(str(root / labeler / "hf"))


def ner_row(tokens: list[str], spans: list[tuple[int, int, str]]) -> dict:
    tags = ["O"] * len(tokens)
    for start, end, label in spans:
        tags[start : end + 1] = [f"B-{label}"] + [f"I-{label}"] * (end - start)
    return {
        "id": "r1#0",
        "report_id": "r1",
        "tokens": tokens,
        "ner_tags": tags,
        "spans": [{"start": s, "end": e, "label": label} for s, e, label in spans],
    }


# "Small left pleural effusion" is one 4-word ABNORMALITY, ending at word 6 of its sentence.
NER = ner_row(["There", "is", "a", "small", "left", "pleural", "effusion", "."], [(3, 6, "ABNORMALITY")])
# Two sentences; DyGIE indices are the document's: the second sentence's entity (document words 7-8) is its words 2-3.
GRAPH = {
    "doc_key": "r1",
    "sentences": [["Heart", "size", "normal", "."], ["No", "pleural", "effusion", "seen", "."]],
    "ner": [
        [{"start": 0, "end": 1, "label": "ANAT-DP"}],
        [{"start": 5, "end": 5, "label": "ANAT-DP"}, {"start": 6, "end": 7, "label": "OBS-DA"}],
    ],
    "relations": [
        [],
        [{"source_start": 6, "source_end": 7, "target_start": 5, "target_end": 5, "label": "located_at"}],
    ],
}


def refused_in_one_line(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert radmetrics(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


def config(recipe: str, scale: str = "tiny") -> str:
    return str(REPO / "configs" / recipe / f"{scale}.yaml")


def test_span_recipes_refuse_an_entity_wider_than_their_span_width(tmp_path, capsys):
    save(tmp_path / "data", "rate_ner", [NER])
    span = load_recipe("rate_ner/span")
    user = ["--silver_dir", str(tmp_path / "data")]
    assert span.check_data(config("rate_ner/span"), user) == str(tmp_path / "data")
    with pytest.raises(
        RecordFormatError,
        match=r"3 of 3 entities are wider than max_span_width 3 \(first: 4 words, train row 0\): "
        r"pass --max_span_width 4$",
    ):
        span.check_data(config("rate_ner/span"), [*user, "--max_span_width", "3"])
    assert load_recipe("rate_ner/iob").check_data(config("rate_ner/iob"), user) == str(tmp_path / "data")
    out = ["--output_dir", str(tmp_path / "run"), "--report_to", "none"]
    err = refused_in_one_line(
        capsys, ["train", "rate_ner/span", "--config", config("rate_ner/span"), *user, "--max_span_width", "3", *out]
    )
    assert "wider than max_span_width 3" in err
    assert not (tmp_path / "run").exists()


def test_an_entity_past_what_max_seq_length_keeps_is_refused(tmp_path, capsys):
    save(tmp_path / "data", "rate_ner", [NER])
    user = ["--silver_dir", str(tmp_path / "data")]
    # effusion is word 7: [CLS] + 7 words + [SEP] need 9 positions at least
    with pytest.raises(RecordFormatError, match=r"ends at word 7 .* pass --max_seq_length 9 or more"):
        load_recipe("rate_ner/iob").check_data(config("rate_ner/iob"), [*user, "--max_seq_length", "8"])
    assert load_recipe("rate_ner/iob").check_data(config("rate_ner/iob"), [*user, "--max_seq_length", "9"])
    err = refused_in_one_line(
        capsys,
        ["train", "rate_ner/iob", "--config", config("rate_ner/iob"), *user, "--max_seq_length", "8"]
        + ["--output_dir", str(tmp_path / "run")],
    )
    assert "split the records into sentences" in err and not (tmp_path / "run").exists()


def test_radgraph_entities_are_placed_within_their_sentence(tmp_path):
    save(tmp_path / "data", "radgraph", [GRAPH])
    radgraph, user = load_recipe("radgraph/train"), ["--silver_dir", str(tmp_path / "data")]
    # the second sentence's OBS-DA ends at its word 4 (document word 8): 6 positions are enough
    assert radgraph.check_data(config("radgraph/train"), [*user, "--max_seq_length", "6"]) == str(tmp_path / "data")
    with pytest.raises(
        RecordFormatError, match=r"3 of 9 entities end past the 3 words .*ends at word 4 of its sentence, train row 0"
    ):
        radgraph.check_data(config("radgraph/train"), [*user, "--max_seq_length", "5"])
    with pytest.raises(
        RecordFormatError,
        match=r"wider than max_span_width 1 \(first: 2 words, train row 0\): pass --max_span_width 2",
    ):
        radgraph.check_data(config("radgraph/train"), [*user, "--max_span_width", "1"])


def test_a_few_entities_cut_in_a_large_corpus_are_logged_not_refused():
    """Under 1% of the entities past the span width (a few long ones, which PURE drops too) is a warning."""
    import logging

    from radmetrics.training.common.encoder_data_checks import check_entity_positions

    narrow = ner_row(["No", "effusion", "."], [(1, 1, "ABNORMALITY")])
    data = DatasetDict({s: Dataset.from_list([NER] + [narrow] * 200) for s in SPLITS})
    seen = []
    handler = logging.Handler()
    handler.emit = seen.append
    logger = logging.getLogger("radmetrics.training")
    logger.addHandler(handler)
    try:
        check_entity_positions(data, "rate_ner", "data/rate_ner/hf", 64, 3)
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in seen] == [
        "data/rate_ner/hf: 3 of 603 entities are wider than max_span_width 3 (first: 4 words, train row 0); the model "
        "never sees them (pass --max_span_width 4)"
    ]


def test_another_recipes_records_are_sent_to_that_recipe(tmp_path):
    save(tmp_path / "graph", "radgraph", [GRAPH])
    with pytest.raises(RecordFormatError, match=r"holds radgraph records \(train radgraph/train on them\), not rate_"):
        load_recipe("rate_ner/iob").check_data(config("rate_ner/iob"), ["--silver_dir", str(tmp_path / "graph")])
    save(tmp_path / "ner", "rate_ner", [NER])
    with pytest.raises(RecordFormatError, match=r"holds rate_ner records .*, not chexpert records for chexbert"):
        load_recipe("chexbert/finetune").check_data(
            config("chexbert/finetune"), ["--silver_dir", str(tmp_path / "ner")]
        )
    (tmp_path / "pairs").mkdir()
    (tmp_path / "pairs" / "train.jsonl").write_text("{}\n")
    with pytest.raises(RecordFormatError, match=r"holds report pairs or annotations \(train green/sft"):
        load_recipe("radgraph/train").check_data(config("radgraph/train"), ["--silver_dir", str(tmp_path / "pairs")])
    with pytest.raises(
        RecordFormatError, match=r"--corpus_dir .* holds rate_ner records .*, not a pretraining corpus"
    ):
        load_recipe("green/pretrain").check_data(config("green/pretrain"), ["--corpus_dir", str(tmp_path / "ner")])
    assert load_recipe("rate_ner/iob").check_data(config("rate_ner/iob"), []) is None  # bundled silver labels


def test_chexbert_rows_are_checked_by_check_data(tmp_path):
    labels = dict.fromkeys(CHEXPERT_CONDITIONS)
    good = {"id": "a", "text": "No effusion.", "labels": {**labels, "Pleural Effusion": 0}}
    save(tmp_path / "good", "chexpert", [good])
    assert load_recipe("chexbert/finetune").check_data(
        config("chexbert/finetune"), ["--silver_dir", str(tmp_path / "good")]
    )
    save(tmp_path / "bad", "chexpert", [{**good, "labels": {**labels, "Pleural Effusion": 2}}])
    with pytest.raises(ReportFileError, match=r"3 bad row\(s\): train row 0: observation\(s\) \['Pleural Effusion'\]"):
        load_recipe("chexbert/finetune").check_data(
            config("chexbert/finetune"), ["--silver_dir", str(tmp_path / "bad")]
        )


def write_findings(folder, records: list[dict], provenance: bool = True) -> None:
    folder.mkdir(exist_ok=True)
    for split in SPLITS:
        (folder / f"findings_{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if provenance:
        (folder / "findings_provenance.json").write_text("{}")


def test_findings_classifier_checks_its_records_before_the_encoder(tmp_path, capsys):
    findings = load_recipe("findings/classifier")
    small = config("findings/classifier", "small")
    records = [{"text": "Small effusion.", "label": 1}, {"text": "Heart size normal.", "label": 0}]
    write_findings(tmp_path / "good", records)
    assert findings.check_data(small, ["--silver_dir", str(tmp_path / "good")]) == str(tmp_path / "good")
    cases = {
        "one_class": ([records[0]], r"every training record has label 1: the head needs findings \(1\) and other"),
        "no_label": ([{"text": "Effusion."}], r"findings_train.jsonl: record 1: `label` is None, not 0"),
        "no_text": ([{"label": 1}], r"record 1: field 'text' is missing"),
    }
    for name, (rows, message) in cases.items():
        write_findings(tmp_path / name, rows)
        with pytest.raises(RecordFormatError, match=message):
            findings.check_data(small, ["--silver_dir", str(tmp_path / name)])
    write_findings(tmp_path / "no_provenance", records, provenance=False)
    with pytest.raises(RecordFormatError, match="findings_provenance.json not found: `radmetrics data findings"):
        findings.check_data(small, ["--silver_dir", str(tmp_path / "no_provenance")])
    write_findings(tmp_path / "broken", records)
    (tmp_path / "broken" / "findings_test.jsonl").write_text('{"text": "a", "label": 1}\n{"text"\n')
    err = refused_in_one_line(
        capsys,
        ["train", "findings/classifier", "--config", small, "--silver_dir", str(tmp_path / "broken")]
        + ["--output_dir", str(tmp_path / "run")],
    )
    assert "findings_test.jsonl: line 2 is not valid JSON" in err and not (tmp_path / "run").exists()


def test_rehearse_checks_the_users_silver_dir_before_anything_is_built(tmp_path, capsys):
    save(tmp_path / "data", "rate_ner", [NER])
    gpu_config = REPO / "configs" / "rate_ner" / "span" / "base.yaml"
    wrong = ["--silver_dir", str(tmp_path / "data"), "--max_span_width", "3"]
    with pytest.raises(RehearsalError, match=r"base.yaml with your data: .* pass --max_span_width 4$"):
        rehearse(gpu_config, tmp_path / "rehearsal", user_overrides=wrong)
    assert not (tmp_path / "rehearsal").exists()
    assert radmetrics(["rehearse", "--workdir", str(tmp_path / "rehearsal"), str(gpu_config), "--", *wrong]) == 1
    assert "FAILED: base.yaml with your data" in capsys.readouterr().out
    assert not (tmp_path / "rehearsal").exists()
