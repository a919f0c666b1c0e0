import json

from radmetrics.data_builders.agreement.radgraph import agreement_with_gold
from radmetrics.data_builders.silver.dataset import write_silver
from radmetrics.data_builders.silver.ner import spans_to_iob, tag_sentence
from radmetrics.data_builders.silver.radgraph import extract_document
from radmetrics.inference.loading.components import get_component
from radmetrics.inference.metrics.radgraph.annotation import dygie_to_annotation


def _named(tagged):
    return [(" ".join(tagged["tokens"][a : b + 1]), kind) for a, b, kind in tagged["spans"]]


def test_rate_ner_types_negation_and_iob():
    tagged = tag_sentence("Small left pleural effusion without pneumothorax or pneumonia.")
    assert _named(tagged) == [
        ("Small left pleural effusion", "ABNORMALITY"),
        ("pneumothorax", "NON-ABNORMALITY"),
        ("pneumonia", "NON-DISEASE"),
    ]
    assert tagged["ner_tags"][:4] == ["B-ABNORMALITY", "I-ABNORMALITY", "I-ABNORMALITY", "I-ABNORMALITY"]
    assert _named(tag_sentence("The lungs are clear.")) == [("lungs", "ANATOMY"), ("clear", "NON-ABNORMALITY")]
    assert set(tagged["ner_tags"]) <= set(get_component("rate_ner_iob").label_map["labels"])


def test_iob_rejects_unknown_types():
    import pytest

    with pytest.raises(ValueError, match="unknown RaTE-NER entity type"):
        spans_to_iob(3, [[0, 1, "FINDING"]])


def test_radgraph_extraction_matches_gold_example():
    """The radgraph package's first RadGraph-XL gold report, sentence by sentence."""
    doc = extract_document(
        "1",
        [
            "The lungs are clear and the costophrenic angles are sharp .",
            "There is no pneumonia , pulmonary edema , pleural effusion , or pneumothorax .",
        ],
    )
    annotation = dygie_to_annotation(doc)
    found = {
        (e["tokens"], e["label"], tuple((r, annotation["entities"][t]["tokens"]) for r, t in e["relations"]))
        for e in annotation["entities"].values()
    }
    assert ("clear", "OBS-DP", (("located_at", "lungs"),)) in found
    assert ("angles", "ANAT-DP", (("modify", "costophrenic"),)) in found
    assert ("effusion", "OBS-DA", (("located_at", "pleural"),)) in found
    assert ("pneumothorax", "OBS-DA", ()) in found
    assert annotation["text"].split()[annotation["entities"]["1"]["start_ix"]] == "lungs"


def test_radgraph_uncertainty_and_suggestive_of():
    doc = extract_document("x", ["Opacity in the right lung base may represent pneumonia."])
    annotation = dygie_to_annotation(doc)
    by_token = {e["tokens"]: e for e in annotation["entities"].values()}
    assert by_token["pneumonia"]["label"] == "OBS-U"
    relations = {(r, annotation["entities"][t]["tokens"]) for r, t in by_token["Opacity"]["relations"]}
    assert ("suggestive_of", "pneumonia") in relations and ("located_at", "lung") in relations


def test_radgraph_agreement_with_gold_is_measured():
    agreement = agreement_with_gold()
    assert (
        agreement["documents"] == 10 and agreement["entities"]["gold"] > 50 and agreement["in_sample"]
    )  # lexicon's dev set
    assert agreement["entities"]["f1"] > 0.6  # a lexicon extractor, not a model: a floor, not a target


def test_write_silver_dataset_and_card(iu_reports, tmp_path):
    from datasets import load_from_disk

    from radmetrics.data_builders.corpus.corpus_io import assign_splits

    reports = iu_reports[:60]
    stats = write_silver(reports, assign_splits(reports), tmp_path, provenance={"corpus": "iu_xray"}, progress=False)
    for name in ("chexpert", "rate_ner", "radgraph"):
        hf = load_from_disk(str(tmp_path / name / "hf"))
        assert sum(len(split) for split in hf.values()) == sum(stats["labelers"][name]["records_per_split"].values())
    first = json.loads((tmp_path / "radgraph" / "train.jsonl").read_text().splitlines()[0])
    assert set(first) == {"doc_key", "sentences", "ner", "relations"}
    n_tokens = sum(len(s) for s in first["sentences"])
    assert all(0 <= e[0] <= e[1] < n_tokens for sentence in first["ner"] for e in sentence)
    card = (tmp_path / "README.md").read_text()
    assert "NegBio" in card and "| Pleural Effusion |" in card and "ANAT-DP" in card
