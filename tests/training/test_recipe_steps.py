"""The encoder recipes' steps as module functions, each called on a handful of hand-made rows (no training): RadGraph's
features, class weights and end-to-end scores, RaTE-NER IOB's subword labels and Trainer metrics, CheXbert's labels and
held-out results."""

from types import SimpleNamespace

import numpy as np
import pytest

LABEL_MAP = {"entities": ["NULL", "ANAT-DP", "OBS-DA"], "relations": ["NULL", "modify", "located_at"]}


@pytest.fixture(scope="module")
def wordpiece(wordpiece_dir):
    from radmetrics.inference.loading.hub import load_tokenizer

    return load_tokenizer(wordpiece_dir)


def sentence(tokens, entities, relations):
    return {
        "tokens": tokens,
        "entities": [{"start": s, "end": e, "label": label} for s, e, label in entities],
        "relations": [
            dict(zip(("source_start", "source_end", "target_start", "target_end", "label"), r)) for r in relations
        ],
    }


def test_radgraph_label_map_puts_null_first():
    from radmetrics.training.radgraph.train import radgraph_label_map

    provenance = {"label_set": {"entities": ["ANAT-DP", "OBS-DA"], "relations": ["modify", "located_at"]}}
    assert radgraph_label_map(provenance) == LABEL_MAP


def test_radgraph_features_label_each_span_and_each_ordered_entity_pair(wordpiece):
    from radmetrics.training.radgraph.train import featurize

    rows = [sentence(["no", "focal", "consolidation"], [(2, 2, "OBS-DA"), (1, 1, "OBS-DA")], [(1, 1, 2, 2, "modify")])]
    batch = {key: [row[key] for row in rows] for key in rows[0]}
    features = featurize(batch, wordpiece, LABEL_MAP, max_span_width=2, max_length=32)
    spans = [(s, e) for s in range(3) for e in range(s, min(s + 2, 3))]  # every span up to two words
    assert features["span_labels"][0] == [2 if span in {(1, 1), (2, 2)} else 0 for span in spans]
    assert features["entity_index"][0] == [spans.index((1, 1)), spans.index((2, 2))]  # gold entities, sorted
    assert features["relation_labels"][0] == [-100, 1, 0, -100]  # (1,1) modifies (2,2); not the other way


def test_radgraph_relation_weights_follow_their_own_power_when_set():
    from radmetrics.training.radgraph.train import loss_class_weights
    from radmetrics.training.span.trainer import SpanArguments

    train = {"span_labels": [[0, 0, 0, 1, 2]], "relation_labels": [[-100, 0, 0, 1, 1, 2]]}
    same = loss_class_weights(train, LABEL_MAP, SpanArguments(class_weight_power=1.0))
    own = loss_class_weights(train, LABEL_MAP, SpanArguments(class_weight_power=1.0, relation_class_weight_power=0.0))
    assert same["entity_class_weights"] == own["entity_class_weights"]
    assert len(same["relation_class_weights"]) == 3 and own["relation_class_weights"] is None  # power 0: unweighted
    flat = loss_class_weights(train, LABEL_MAP, SpanArguments(class_weight_power=0.0))
    assert flat == {"entity_class_weights": None, "relation_class_weights": None}


def test_radgraph_end_to_end_scores_read_the_extractors_own_entities():
    from radmetrics.training.radgraph.train import end_to_end_scores, prediction_records

    rows = [
        {
            "id": "r#0",
            "report_id": "r",
            **sentence(["a", "b", "c"], [(0, 0, "ANAT-DP"), (2, 2, "OBS-DA")], [(2, 2, 0, 0, "located_at")]),
        },
        {"id": "r#1", "report_id": "r", **sentence(["d", "e"], [(0, 1, "OBS-DA")], [])},
    ]

    class Extractor:
        def extract(self, tokens):
            assert tokens == [["a", "b", "c"], ["d", "e"]]
            return [([[0, 0, "ANAT-DP"]], [[2, 2, 0, 0, "located_at"]]), ([[0, 0, "OBS-DA"]], [])]

    scored = end_to_end_scores(Extractor(), Rows(rows), LABEL_MAP)
    scores = scored["scores"]
    assert (scores["entity_precision"], scores["entity_recall"]) == (0.5, 1 / 3)
    assert (scores["relation_precision"], scores["relation_recall"]) == (1.0, 1.0)
    assert scores["entity_never_predicted"] == [] and scores["entity_support_OBS-DA"] == 2
    records = prediction_records(Rows(rows), scored, baseline=[set(), {(0, 1, "OBS-DA")}])
    assert records[1] == {
        "id": "r#1",
        "report_id": "r",
        "tokens": ["d", "e"],
        "gold_entities": [(0, 1, "OBS-DA")],
        "predicted_entities": [(0, 0, "OBS-DA")],
        "baseline_word_majority_entities": [(0, 1, "OBS-DA")],
        "gold_relations": [],
        "predicted_relations": [],
    }


class Rows(list):
    """A datasets.Dataset's two ways in: a column by name, or the rows."""

    def __getitem__(self, key):
        return [row[key] for row in self] if isinstance(key, str) else super().__getitem__(key)


def test_iob_labels_the_first_subword_of_each_word(wordpiece):
    from radmetrics.training.rate_ner.iob import tokenize_and_align

    label2id = {"O": 0, "B-ANATOMY": 1, "I-ANATOMY": 2}
    batch = {"tokens": [["left", "lung", "clear"]], "ner_tags": [["B-ANATOMY", "I-ANATOMY", "O"]]}
    encoded = tokenize_and_align(batch, wordpiece, label2id, max_length=32, all_subwords=False)
    word_ids = encoded.word_ids(0)
    labels = encoded["labels"][0]
    assert len(labels) == len(encoded["input_ids"][0])
    firsts = [i for i, w in enumerate(word_ids) if w is not None and (i == 0 or word_ids[i - 1] != w)]
    assert [labels[i] for i in firsts] == [1, 2, 0]
    assert all(label == -100 for i, label in enumerate(labels) if i not in firsts)


def test_iob_metrics_score_entities_over_the_labelled_subwords():
    from radmetrics.training.rate_ner.iob import iob_metrics, to_tags

    labels = ["O", "B-ANATOMY", "I-ANATOMY", "B-DISEASE", "I-DISEASE"]
    label_ids = np.array([[-100, 1, 2, 0, 3, -100]])
    logits = np.eye(5)[[0, 1, 2, 0, 0, 3]][None]  # the anatomy found, the disease missed, the padding's guess ignored
    assert to_tags(logits.argmax(-1), label_ids, labels) == (
        [["B-ANATOMY", "I-ANATOMY", "O", "B-DISEASE"]],
        [["B-ANATOMY", "I-ANATOMY", "O", "O"]],
    )
    scores = iob_metrics(SimpleNamespace(predictions=logits, label_ids=label_ids), labels, ["ANATOMY", "DISEASE"])
    assert (scores["precision"], scores["recall"], scores["macro_f1"]) == (1.0, 0.5, 0.5)
    assert "never_predicted" not in scores  # a list: not logged as a scalar


def test_iob_model_has_a_head_per_label():
    from radmetrics.training.common.arguments import ModelArguments
    from radmetrics.training.rate_ner.iob import build_model

    class Tokenizer:
        def __len__(self):
            return 50

    labels = ["O", "B-ANATOMY", "I-ANATOMY"]
    model = build_model(ModelArguments(model_name_or_path="tiny-bert"), Tokenizer(), labels)
    assert model.config.label2id == {"O": 0, "B-ANATOMY": 1, "I-ANATOMY": 2} and model.num_labels == 3


def test_chexbert_reports_train_every_head_and_sentences_all_but_no_finding(wordpiece):
    from radmetrics.data_builders.silver.rule_labeler import label_report
    from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
    from radmetrics.training.chexbert.finetune import head_classes, tokenize_reports
    from radmetrics.training.chexbert.loss import IGNORED_HEAD

    text = "Small left pleural effusion."
    batch = {"text": [text], "labels": [label_report(text)]}
    report = tokenize_reports(batch, wordpiece, max_length=32)
    sentence = tokenize_reports(batch, wordpiece, max_length=32, whole_reports=False)
    no_finding = CHEXPERT_CONDITIONS.index("No Finding")
    assert report["labels"][0] == head_classes(label_report(text))
    assert sentence["labels"][0][no_finding] == IGNORED_HEAD
    assert [c for i, c in enumerate(sentence["labels"][0]) if i != no_finding] == [
        c for i, c in enumerate(report["labels"][0]) if i != no_finding
    ]


def test_chexbert_majority_baseline_predicts_each_heads_commonest_training_class():
    from radmetrics.training.chexbert.finetune import majority_baseline

    train = [[1, 0], [1, 2], [0, 2]]  # head 0: positive twice; head 1: negative twice
    assert majority_baseline(train, np.array([[1, 2], [1, 2]])) == {"kappa": 1.0, "weighted_f1": 1.0, "macro_f1": 1.0}
    missed = majority_baseline(train, np.array([[2, 2], [2, 2]]))  # head 0 says positive where gold says negative
    assert missed["weighted_f1"] == 0.5 and missed["macro_f1"] == 0.5


def test_chexbert_negbio_agreement_is_empty_without_manually_labelled_reports():
    from radmetrics.training.chexbert.finetune import negbio_agreement

    test = {"id": ["not-an-iu-report"], "text": ["No acute disease."]}
    assert negbio_agreement(test, np.zeros((1, 14), dtype=int), reserved=set()) == {}


def test_gold_sentences_allow_their_silver_class_and_any_no_finding_class(wordpiece):
    from radmetrics.data_builders.silver.rule_labeler import label_report
    from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
    from radmetrics.training.chexbert.gold import allowed_classes, encode_sentences, head_offsets

    classes_per_head = [4] * 13 + [2]
    text = "Small left pleural effusion."
    silver = label_report(text)
    encoded = encode_sentences({"text": [text], "labels": [silver]}, wordpiece, classes_per_head, max_length=32)
    mask = encoded["labels"][0]
    start = head_offsets(classes_per_head)["No Finding"]
    n = classes_per_head[CHEXPERT_CONDITIONS.index("No Finding")]
    assert mask[start : start + n] == [1] * n
    silver_only = allowed_classes({}, silver, classes_per_head)
    assert mask[:start] + mask[start + n :] == silver_only[:start] + silver_only[start + n :]


def test_gold_metrics_read_positives_back_from_the_masks():
    from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
    from radmetrics.training.chexbert.gold import allowed_classes, gold_metrics, prediction_rows, shared_labels

    classes_per_head = [4] * 13 + [2]
    labels = shared_labels()
    silver = dict.fromkeys(CHEXPERT_CONDITIONS)  # the rule labeler mentioned nothing
    positive = {label: i == 0 for i, label in enumerate(labels)}  # the first shared label positive, the rest not
    masks = np.array([allowed_classes(positive, silver, classes_per_head)])
    logits = np.where(masks == 1, 5.0, 0.0)  # each head's argmax: its first allowed class
    assert gold_metrics(SimpleNamespace(predictions=logits, label_ids=masks), classes_per_head, labels) == {
        "macro_f1": 1.0 / len(labels)  # the positive label found; the others have no positives (F1 0 by convention)
    }
    report = SimpleNamespace(id="r1")
    gold, ours, rule = [[True, False]], [[True, True]], [[False, False]]
    assert prediction_rows([report], "test", gold, ours, rule, labels[:2]) == [
        {
            "id": "r1",
            "split": "test",
            f"gold_{labels[0]}": True,
            f"gold_{labels[1]}": False,
            f"model_{labels[0]}": True,
            f"model_{labels[1]}": True,
            f"rule_{labels[0]}": False,
            f"rule_{labels[1]}": False,
        }
    ]
