"""The one span scorer of the span recipes (training/span/scores.py) against seqeval through `evaluate`, offline, on
non-overlapping spans; the classes it must not hide."""

from pathlib import Path

import pytest

from radmetrics.inference.loading.components import get_component
from radmetrics.training.span.scores import iob_spans, span_classification_scores, span_scores

TYPES = get_component("rate_ner_span").label_map["labels"][1:]
SEQEVAL_MODULE = Path(__file__).parents[1] / "evaluate_seqeval"


def random_tags(rng, length: int) -> list[str]:
    """Random IOB tags, including an I- without its B- (seqeval's lenient mode starts an entity there)."""
    return [rng.choice(["O", "O", "O"] + [f"{p}-{t}" for t in TYPES for p in "BI"]) for _ in range(length)]


def test_span_scores_equal_seqeval_through_evaluate_on_non_overlapping_spans():
    import random

    import evaluate

    rng = random.Random(0)
    gold = [random_tags(rng, rng.randint(1, 15)) for _ in range(300)]
    predicted = [
        [tag if rng.random() < 0.7 else rng.choice(["O", "B-DISEASE", "I-ANATOMY"]) for tag in row] for row in gold
    ]
    seqeval = evaluate.load(str(SEQEVAL_MODULE)).compute(predictions=predicted, references=gold)
    ours = span_scores([iob_spans(t) for t in gold], [iob_spans(t) for t in predicted], TYPES)
    for name in ("precision", "recall", "f1"):
        assert ours[name] == pytest.approx(seqeval["micro avg"][name], abs=1e-12)
        for kind in TYPES:
            assert ours[f"{name}_{kind}"] == pytest.approx(seqeval[kind][name], abs=1e-12), (name, kind)
    for kind in TYPES:
        assert ours[f"support_{kind}"] == seqeval[kind]["support"]
    assert ours["macro_f1"] == pytest.approx(seqeval["macro avg"]["f1"], abs=1e-12)  # every type has support here


def test_a_class_with_support_never_predicted_is_flagged_and_counts_in_macro():
    gold = [{(0, 1, "ANATOMY"), (3, 3, "DISEASE")}, {(0, 0, "ABNORMALITY")}]
    predicted = [{(0, 1, "ANATOMY"), (3, 3, "ABNORMALITY")}, {(0, 0, "ABNORMALITY")}]
    scores = span_scores(gold, predicted, TYPES, prefix="test_")
    assert scores["test_never_predicted"] == ["DISEASE"]  # NON-DISEASE has no support: absent, not flagged
    assert scores["test_f1_NON-DISEASE"] == 0.0 and scores["test_support_NON-DISEASE"] == 0
    assert scores["test_predicted_DISEASE"] == 0 and scores["test_support_DISEASE"] == 1
    # macro over ANATOMY (1.0), ABNORMALITY (2/3) and DISEASE (0.0): the classes with support
    assert scores["test_macro_f1"] == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)
    assert scores["test_f1"] == pytest.approx(2 * (2 / 3) * (2 / 3) / (4 / 3))


def test_trainer_time_scores_give_macro_f1_over_supported_classes():
    import numpy as np

    labels = np.array([[0, 1, 2, -100], [0, 1, 0, 0]])
    logits = np.eye(3)[np.array([[0, 1, 0, 0], [1, 1, 0, 0]])]  # class 2 is never predicted
    scores = span_classification_scores(logits, labels, ["NULL", "A", "B"])
    assert scores["f1_A"] == pytest.approx(0.8) and scores["f1_B"] == 0.0
    assert scores["macro_f1"] == pytest.approx(0.4)


def test_class_weights_follow_the_frequency_power_and_average_one_per_instance():
    from radmetrics.training.span.trainer import class_weights

    rows = [[0, 0, 0, 1, -100], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]]  # counts 14, 1, 1
    assert class_weights(rows, 3, 0.0) is None
    weights = class_weights(rows, 3, 1.0)
    assert weights[1] == pytest.approx(14 * weights[0]) and weights[1] == weights[2]
    assert (14 * weights[0] + weights[1] + weights[2]) / 16 == pytest.approx(1.0)
    assert class_weights([[0, 0, 0, 0]], 2, 0.5)[1] == pytest.approx(2 * class_weights([[0, 0, 0, 0]], 2, 0.5)[0])
