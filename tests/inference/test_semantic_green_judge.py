"""semantic_green's finding-pair judge: judge=rules leaves every value as it was; with a judge's decisions, an
attribute error keeps the pair matched and adds its error (CRIMSON's weight), a contradiction is an error, an
unrelated pair is unmatched; the page shows each decision; judge=model without a judge is refused at the door."""

from __future__ import annotations

import numpy as np
import pytest

from radmetrics.inference.findings.judge_labels import JUDGE_LABELS, JudgeDecision, parse_label
from radmetrics.inference.metrics.base import OptionError
from radmetrics.inference.metrics.semantic_green.judge import confident_decisions, judged_annotation, rules_decision
from radmetrics.inference.metrics.semantic_green.metric import SemanticGreen, weighted_errors
from radmetrics.inference.metrics.semantic_green.teacher import Rules, annotate_pair

REFERENCE = ["Moderate right pleural effusion", "No pneumothorax"]
CANDIDATE = ["Large right pleural effusion", "No pneumothorax"]
SIMILARITY = np.array([[0.9, 0.1], [0.1, 1.0]], dtype=np.float32)


def judged(decision: JudgeDecision):
    decisions = {(REFERENCE[0], CANDIDATE[0]): decision}
    return judged_annotation(REFERENCE, CANDIDATE, SIMILARITY, Rules(interval_change=True), decisions)


def test_labels_read_back():
    for label in JUDGE_LABELS:
        assert parse_label(label).label == label
    with pytest.raises(ValueError):
        parse_label("attribute:colour:significant")


def test_an_attribute_error_stays_matched_and_weighs_as_crimson():
    annotation = judged(JudgeDecision("attribute_error", "severity", True))
    assert annotation.matched == 2 and sum(annotation.significant) == 1
    assert annotation.errors[0].category == "d" and annotation.score == 2 / 3
    assert weighted_errors(annotation, None)[0] == 0.5
    assert annotation.to_dict()["decisions"] == [[0, 0, "attribute:severity:significant"]]
    insignificant = judged(JudgeDecision("attribute_error", "measurement", False))
    assert sum(insignificant.significant) == 0 and sum(insignificant.insignificant) == 1
    assert weighted_errors(insignificant, None)[0] == 0.0


def test_the_rules_unmatch_the_same_pair():
    rules = annotate_pair(REFERENCE, CANDIDATE, SIMILARITY, Rules(interval_change=True))
    assert rules.matched == 1 and sum(rules.significant) == 1 and "decisions" not in rules.to_dict()


def test_contradictions_and_unrelated_pairs():
    laterality = judged(JudgeDecision("contradiction", "laterality", True))
    assert laterality.matched == 1 and [e.category for e in laterality.errors] == ["c"]
    unrelated = judged(JudgeDecision("unrelated"))
    assert unrelated.matched == 1 and sorted(e.category for e in unrelated.errors) == ["a", "b"]
    same = judged(JudgeDecision("same"))
    assert same.matched == 2 and not same.errors and same.score == 1.0


def test_rules_decisions_in_the_judges_labels():
    assert rules_decision("Right pleural effusion", "Left pleural effusion").label == "contradiction:laterality"
    assert rules_decision("Pleural effusion", "No pleural effusion").label == "contradiction:negation"
    assert rules_decision("Moderate effusion", "Large effusion").label == "attribute:severity:significant"
    assert rules_decision("8 mm nodule", "18 mm nodule").label == "same"  # what the rules miss


def test_the_page_shows_each_decision():
    detail = judged(JudgeDecision("attribute_error", "severity", True)).to_dict()
    shown = SemanticGreen.display_detail(
        {**detail, **{"errors": [{**e, "level": None, "weight": 0.5} for e in detail["errors"]]}}
    )
    judge_rows = [t for t in shown["tables"] if "judge" in t["caption"]][0]["rows"]
    assert judge_rows == [
        [
            "C1: Large right pleural effusion",
            "R1: Moderate right pleural effusion",
            "attribute_error",
            "severity",
            "significant",
        ]
    ]


def test_judge_model_without_components_uses_the_shipped_judge_and_its_signature_names_it():
    from radmetrics.inference.metrics.semantic_green.judge import FeatureJudge, shipped_judge
    from radmetrics.inference.scoring.signature import fingerprint

    metric = SemanticGreen(judge="model")
    assert f"finding_judge:{fingerprint(str(shipped_judge()))}" in metric.signature_parts()
    assert isinstance(metric.finding_judge(), FeatureJudge)
    assert "finding_judge" not in " ".join(SemanticGreen().signature_parts())  # judge=rules names no judge


def probabilities(label: str, p: float) -> np.ndarray:
    """One row of label probabilities: `label` at p, the rest spread evenly."""
    row = np.full(len(JUDGE_LABELS), (1.0 - p) / (len(JUDGE_LABELS) - 1))
    row[JUDGE_LABELS.index(label)] = p
    return row


def test_the_judge_overrides_only_where_confident():
    rows = np.stack(
        [
            probabilities("attribute:measurement:significant", 0.6),
            probabilities("attribute:location:significant", 0.6),
            probabilities("contradiction:laterality", 0.3),
            probabilities("same", 0.9),
        ]
    )
    assert [d and d.label for d in confident_decisions(rows, 0.5, "all")] == [
        "attribute:measurement:significant",
        "attribute:location:significant",
        None,
        None,
    ]
    assert [d and d.label for d in confident_decisions(rows, 0.2, "rule_blind")] == [
        "attribute:measurement:significant",
        None,  # location: the rules see it
        None,  # contradictions stay with the rules under rule_blind
        None,
    ]
    assert [d and d.label for d in confident_decisions(rows, 0.5, "matched")] == [
        "attribute:measurement:significant",
        "attribute:location:significant",
        None,  # contradictions stay with the rules under matched
        "same",  # a confident `same` decides the pair: it clears an error the rules saw
    ]
    assert [d and d.label for d in confident_decisions(rows, 0.2, "attributes")] == [
        "attribute:measurement:significant",
        "attribute:location:significant",
        None,
        None,
    ]
    assert confident_decisions(rows, 0.6, "all") == [None] * 4  # strictly above the threshold
    assert confident_decisions(rows, 1.0, "all") == [None] * 4
    with pytest.raises(ValueError, match="scope"):
        confident_decisions(rows, 0.5, "some")


def test_a_pair_the_judge_leaves_is_decided_as_the_rules_decide_it():
    rules = annotate_pair(REFERENCE, CANDIDATE, SIMILARITY, Rules(interval_change=True))
    for decisions in ({}, {(REFERENCE[0], CANDIDATE[0]): None}):
        left = judged_annotation(REFERENCE, CANDIDATE, SIMILARITY, Rules(interval_change=True), decisions)
        assert left.to_dict() == rules.to_dict()


def test_only_judge_model_matches_a_synonym_as_its_diagnosis():
    """judge=rules' matcher embeds the findings as written (181c1e4's values); judge=model's reads a description that
    names a diagnosis as it, so "Enlarged cardiac silhouette" and "Cardiomegaly" embed alike."""
    from radmetrics.inference.findings.pair_features import read_as_diagnoses

    class Recorder:
        def __init__(self):
            self.seen = []

        def encode(self, texts, batch_size=64, progress=False, desc=""):
            self.seen += list(texts)
            return np.ones((len(texts), 2), dtype=np.float32)

    for judge, read in (("rules", None), ("model", read_as_diagnoses)):
        encoder = Recorder()
        teacher = SemanticGreen(judge=judge).teacher(encoder)
        assert teacher.read_as is read
        vectors = teacher.embeddings(["Enlarged cardiac silhouette"])
        assert list(vectors) == ["Enlarged cardiac silhouette"]  # keyed by the finding as written
        assert encoder.seen == (["cardiomegaly"] if read else ["Enlarged cardiac silhouette"])


def test_the_threshold_and_scope_are_checked_at_the_door():
    with pytest.raises(OptionError, match="judge_threshold"):
        SemanticGreen(judge_threshold=1.5)
    with pytest.raises(OptionError, match="judge_scope"):
        SemanticGreen(judge_scope="some")
    with pytest.raises(OptionError, match="judge_significance"):
        SemanticGreen(judge_significance="cue")
    defaults = " ".join(SemanticGreen(judge_significance="terms").signature_parts())
    assert "judge:rules" in defaults and "judge_threshold" not in defaults  # the rules' signature names no judge
    assert "judge_significance" not in defaults
    judged = " ".join(SemanticGreen(judge="model").signature_parts())
    assert "judge_threshold:0.4" in judged and "judge_scope:matched" in judged
    assert "judge_significance:lexicon" in judged


def test_judge_significance_terms_counts_what_the_lexicon_misses():
    """An unmatched finding the entity lexicon does not read as an abnormality ("airspace disease") is insignificant
    as judge=rules decides it, significant with judge_significance=terms; judge=rules ignores the option."""
    reference, candidate = ["Improving airspace disease in the right lung"], []
    similarity = np.zeros((1, 0), dtype=np.float32)
    for significance, expected in (("lexicon", 0), ("terms", 1)):
        rules_ = SemanticGreen(judge="model", judge_significance=significance).teacher(object()).rules
        annotation = judged_annotation(reference, candidate, similarity, rules_, {})
        assert sum(annotation.significant) == expected and annotation.errors[0].category == "b"
    assert SemanticGreen(judge_significance="terms").teacher(object()).rules.significance == "lexicon"
    normal = judged_annotation(["No pleural effusion"], [], similarity, Rules(significance="terms"), {})
    assert sum(normal.significant) == 0  # a normal statement stays insignificant
