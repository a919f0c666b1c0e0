"""A user's own labels, from their files to an export and a score: CoNLL and JSONL spans -> rate_ner/iob and
rate_ner/span -> export -> ratescore, with a sixth entity type; RadGraph JSON and BRAT -> radgraph/train; a
CheXpert-style CSV -> chexbert/finetune; each with a broken file refused in one line before any model loads."""

from __future__ import annotations

import json

import pytest

from radmetrics.data_builders.labels.brat import write_brat
from radmetrics.data_builders.labels.chexpert_csv import write_chexpert_csv
from radmetrics.data_builders.labels.conll import write_conll
from radmetrics.data_builders.labels.radgraph_json import write_radgraph_json
from radmetrics.data_builders.labels.token_jsonl import write_token_jsonl
from radmetrics.data_builders.labels.token_records import ner_record
from radmetrics.inference.cli import main as radmetrics
from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

FAST = (
    "--model_name_or_path tiny-bert --tiny_hidden_size 32 --per_device_train_batch_size 8 --report_to none "
    "--save_strategy no --eval_strategy no --logging_steps 1000 --seed 0 --max_seq_length 32"
).split()
# Twelve reports of two sentences, with a sixth entity type (DEVICE) beside RaTE's.
SIDES, FINDINGS = ("left", "right", "bilateral"), ("effusion", "pneumothorax", "consolidation", "edema")
DEVICES = ("catheter", "pacemaker", "tube")


def sentences_of(report: int) -> list[tuple[list[str], list[list]]]:
    side, finding, device = SIDES[report % 3], FINDINGS[report % 4], DEVICES[report % 3]
    return [
        ([side.capitalize(), "lung", "shows", finding, "."], [[0, 1, "ANATOMY"], [3, 3, "ABNORMALITY"]]),
        (["A", device, "is", "seen", ",", "no", finding, "."], [[1, 1, "DEVICE"], [5, 6, "NON-ABNORMALITY"]]),
    ]


def ner_records(prefix: str) -> list[dict]:
    return [
        ner_record(f"{prefix}{n}#{i}", f"{prefix}{n}", tokens, spans, None)
        for n in range(12)
        for i, (tokens, spans) in enumerate(sentences_of(n))
    ]


def import_labels(fmt: str, files: list, out, *extra: str) -> None:
    splits = ["--file-splits", "train", "validation", "test", "--allow-leakage"] if len(files) == 3 else []
    assert radmetrics(["data", "import", fmt, *map(str, files), "--out", str(out), *splits, *extra]) == 0


def three_copies(tmp_path, write, suffix: str) -> list:
    """The same labels as train, validation and test (renamed reports): a model can overfit and be checked."""
    paths = []
    for split in ("train", "validation", "test"):
        path = tmp_path / f"{split}{suffix}"
        write(ner_records(f"{split}_"), path)
        paths.append(path)
    return paths


def gold_entities() -> list[set]:
    return [
        {(" ".join(tokens[s : e + 1]), kind) for tokens, spans in sentences_of(n) for s, e, kind in spans}
        for n in range(12)
    ]


def report_texts() -> list[str]:
    return [" ".join(" ".join(tokens) for tokens, _ in sentences_of(n)) for n in range(12)]


def scored_ratescore(export, kind: str):
    from radmetrics.inference.scoring.scorer import Scorer

    texts = report_texts()
    options = {"ratescore": {"other_type_weight": 0.5}}
    return Scorer(["ratescore"], {kind: str(export)}, metric_options=options, n_bootstrap=20)(texts, texts[::-1])


def refused_in_one_line(capsys, argv: list[str]) -> str:
    assert radmetrics(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


@pytest.mark.slow
def test_conll_with_a_sixth_type_trains_iob_exports_and_scores_its_own_tags(tmp_path):
    from radmetrics.inference.metrics.ratescore.taggers import RateNerTagger
    from radmetrics.training.export import export_run
    from radmetrics.training.rate_ner import iob

    import_labels("conll", three_copies(tmp_path, write_conll, ".conll"), tmp_path / "data", "--labels-from-data")
    run = iob.main(
        [*FAST, "--silver_dir", str(tmp_path / "data"), "--output_dir", str(tmp_path / "run"), "--max_steps", "100"]
        + ["--learning_rate", "0.01", "--warmup_steps", "0", "--per_device_train_batch_size", "16"]
    )
    export = export_run(run, tmp_path / "export")
    manifest = json.loads((export / "radmetrics.json").read_text())
    assert (
        manifest["label_map"]["labels"][-2:] == ["B-DEVICE", "I-DEVICE"]
        and "B-DEVICE" in (export / "README.md").read_text()
    )
    assert manifest["data_provenance"]["label_set"]["entity_types"] == [
        "ABNORMALITY",
        "NON-ABNORMALITY",
        "ANATOMY",
        "DEVICE",
    ]
    tagged = RateNerTagger(str(export)).entities(report_texts())
    assert [set(found) for found in tagged] == gold_entities()  # the user's tags, read back through the label map
    result = scored_ratescore(export, "rate_ner_iob")
    assert 0 < result.summary["ratescore"]["value"] <= 1


@pytest.mark.slow
def test_jsonl_character_spans_train_span_exports_and_score(tmp_path):
    from radmetrics.inference.loading.checkpoint import load_manifest
    from radmetrics.training.export import export_run
    from radmetrics.training.rate_ner import span

    files = three_copies(tmp_path, lambda records, path: write_token_jsonl(records, path, "text"), ".jsonl")
    import_labels("token-jsonl", files, tmp_path / "data", "--labels-from-data")
    run = span.main(
        [*FAST, "--silver_dir", str(tmp_path / "data"), "--output_dir", str(tmp_path / "run"), "--max_steps", "40"]
        + ["--head_hidden_size", "32", "--width_embedding_size", "8"]
    )
    export = export_run(run, tmp_path / "export")
    _, manifest = load_manifest(export, "rate_ner_span")
    assert manifest["label_map"]["labels"] == ["NULL", "ABNORMALITY", "NON-ABNORMALITY", "ANATOMY", "DEVICE"]
    assert 0 <= scored_ratescore(export, "rate_ner_span").summary["ratescore"]["value"] <= 1


def graph_documents(prefix: str) -> list[dict]:
    documents = []
    for n in range(12):
        side, finding = SIDES[n % 3], FINDINGS[n % 4]
        documents.append(
            {
                "doc_key": f"{prefix}{n}",
                "sentences": [["Small", side, finding, "."]],
                "ner": [[[0, 0, "OBS-DP"], [1, 1, "ANAT-DP"], [2, 2, "OBS-DP"]]],
                "relations": [[[0, 0, 2, 2, "modify"], [2, 2, 1, 1, "located_at"]]],
            }
        )
    return documents


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["radgraph-json", "brat"])
def test_radgraph_json_and_brat_train_radgraph(tmp_path, fmt):
    from radmetrics.inference.loading.checkpoint import load_manifest
    from radmetrics.training.export import export_run
    from radmetrics.training.radgraph import train

    files = []
    for split in ("train", "validation", "test"):
        if fmt == "brat":
            (tmp_path / split).mkdir()
            write_brat(graph_documents(f"{split}_"), tmp_path / split)
            files.append(tmp_path / split)
        else:
            write_radgraph_json(graph_documents(f"{split}_"), tmp_path / f"{split}.json")
            files.append(tmp_path / f"{split}.json")
    import_labels(fmt, files, tmp_path / "data")
    run = train.main(
        [*FAST, "--silver_dir", str(tmp_path / "data"), "--output_dir", str(tmp_path / "run"), "--max_steps", "20"]
        + ["--head_hidden_size", "32", "--width_embedding_size", "8", "--tune_relation_offsets", "false"]
    )
    _, manifest = load_manifest(export_run(run, tmp_path / "export"), "radgraph")
    assert manifest["data_provenance"]["train_examples"] == 12 and "test_entity_f1" in manifest["eval_results"]
    assert manifest["data_provenance"]["imported_labels"]["format"] == fmt


@pytest.mark.slow
def test_chexpert_csv_trains_chexbert(tmp_path):
    from radmetrics.training.chexbert import finetune
    from radmetrics.training.common.run_dir import read_eval_results

    blank = dict.fromkeys(CHEXPERT_CONDITIONS)
    records = [
        {
            "id": f"r{n}",
            "text": f"{'No' if n % 2 else 'Small'} {finding}, bed {n}.",
            "labels": {**blank, "Edema": n % 2 or -1},
        }
        for n, finding in enumerate(["edema", "pleural effusion", "edema of the lungs", "mild edema"] * 5)
    ]
    write_chexpert_csv(records, tmp_path / "labels.csv")
    import_labels(
        "chexpert-csv", [tmp_path / "labels.csv"], tmp_path / "data", "--split-ratios", "0.5", "0.25", "0.25"
    )
    run = finetune.main(
        [*FAST, "--silver_dir", str(tmp_path / "data"), "--output_dir", str(tmp_path / "run"), "--max_steps", "10"]
    )
    assert "test_kappa" in read_eval_results(run)


def test_broken_files_are_refused_in_one_line_before_any_model(tmp_path, capsys):
    (tmp_path / "bad.conll").write_text("-DOCSTART- r1\nNo O\neffusion B-ABNORMALTY\n")
    err = refused_in_one_line(
        capsys, ["data", "import", "conll", str(tmp_path / "bad.conll"), "--out", str(tmp_path / "o")]
    )
    assert "bad.conll:2: unknown label(s) ['ABNORMALTY']" in err and "--drop-bad" in err
    (tmp_path / "bad.jsonl").write_text('{"text": "Small effusion.", "spans": [[0, 3, "ABNORMALITY"]]}\n')
    err = refused_in_one_line(
        capsys, ["data", "import", "token-jsonl", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "o")]
    )
    assert "bad.jsonl:1: span [0, 3, 'ABNORMALITY'] ('Sma') does not fall on word boundaries" in err
    (tmp_path / "bad.json").write_text(
        '{"d": {"text": "No edema .", "entities": {"1": {"label": "OBS-DA", "start_ix": 5}}}}'
    )
    err = refused_in_one_line(
        capsys, ["data", "import", "radgraph-json", str(tmp_path / "bad.json"), "--out", str(tmp_path / "o")]
    )
    assert "bad.json:1:" in err
    (tmp_path / "r.txt").write_text("Small left effusion.")
    (tmp_path / "r.ann").write_text("T1\tOBS-DP 0 5;11 19\tSmall effusion\n")
    err = refused_in_one_line(capsys, ["data", "import", "brat", str(tmp_path), "--out", str(tmp_path / "o")])
    assert "r.ann:1: T1 OBS-DP has a discontinuous span" in err
    (tmp_path / "bad.csv").write_text("id,text," + ",".join(CHEXPERT_CONDITIONS) + "\na,Normal.,2" + "," * 13 + "\n")
    err = refused_in_one_line(
        capsys, ["data", "import", "chexpert-csv", str(tmp_path / "bad.csv"), "--out", str(tmp_path / "o")]
    )
    assert "bad.csv:2: Enlarged Cardiomediastinum is '2'" in err
    assert not (tmp_path / "o" / "rate_ner").exists()


def test_a_recipe_refuses_bad_rows_before_any_model(tmp_path, capsys):
    from datasets import Dataset, DatasetDict

    row = {"id": "a", "report_id": "a", "tokens": ["No", "effusion"], "ner_tags": ["O", "B-FOO"], "spans": []}
    DatasetDict({s: Dataset.from_list([row]) for s in ("train", "validation", "test")}).save_to_disk(
        str(tmp_path / "data" / "rate_ner" / "hf")
    )
    capsys.readouterr()  # the progress bars of saving it
    args = [
        "train",
        "rate_ner/iob",
        *FAST,
        "--silver_dir",
        str(tmp_path / "data"),
        "--output_dir",
        str(tmp_path / "run"),
    ]
    err = refused_in_one_line(capsys, args)
    assert "3 bad row(s): train row 0: unknown entity type(s) ['FOO']" in err
    assert not (tmp_path / "run").exists()
    nothing = refused_in_one_line(capsys, [*args[:-4], "--silver_dir", str(tmp_path / "none"), *args[-2:]])
    assert "radmetrics data import FORMAT FILE..." in nothing


def test_drop_bad_counts_what_it_leaves_out(tmp_path):
    records = ner_records("r")
    write_conll(records, tmp_path / "a.conll")
    text = (tmp_path / "a.conll").read_text().replace("B-DEVICE", "B-ABNORMALITY", 8)  # 4 DEVICE sentences left
    (tmp_path / "a.conll").write_text(text)
    import_labels(
        "conll", [tmp_path / "a.conll"], tmp_path / "out", "--drop-bad", "--split-ratios", "0.5", "0.25", "0.25"
    )
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["dropped"] == {"unknown_label": 4} and sum(stats["records_per_split"].values()) == 20
    assert "Left out with --drop-bad: 4 unknown_label" in (tmp_path / "out" / "README.md").read_text()


def test_given_splits_that_leak_are_refused(tmp_path, capsys):
    paths = three_copies(tmp_path, write_conll, ".conll")
    argv = ["data", "import", "conll", *map(str, paths), "--out", str(tmp_path / "o"), "--labels-from-data"]
    err = refused_in_one_line(capsys, [*argv, "--file-splits", "train", "validation", "test"])
    assert "held-out reports repeat train reports word for word" in err and "--allow-leakage" in err
