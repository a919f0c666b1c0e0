"""Finding-level agreement with RadPref's raters (radmetrics.inference.meta_evaluation.findings_agreement)."""

import numpy as np
import pytest

from radmetrics.inference.meta_evaluation.findings_agreement import (
    binary_agreement,
    extraction_scores,
    findings_agreement,
    judged_errors,
    rater_errors,
    todays_findings,
)
from radmetrics.inference.meta_evaluation.radpref import load_radpref, split_candidates
from radmetrics.inference.metrics.semantic_green.teacher import SemanticTeacher


class WordEncoder:
    """Bag-of-words vectors, normalised: equal texts have cosine 1, texts without a shared word 0."""

    def encode(self, texts, batch_size=64, progress=False, desc=""):
        vectors = np.zeros((len(texts), 512), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, sum(map(ord, word)) % 512] += 1.0
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


def test_binary_agreement_f1_and_kappa():
    assert binary_agreement([True, False, True, False], [True, False, True, False])["kappa"] == 1.0
    entry = binary_agreement([True, True, False, False], [True, False, False, False])
    assert entry["f1"] == pytest.approx(2 / 3) and entry["kappa"] == pytest.approx(0.5)


def test_rater_and_judge_errors_by_index():
    label = {
        "finding_errors": {"1": {"error_type": "false"}, "2": {"error_type": "attribute"}},
        "missing_findings": {"0": {}},
    }
    assert rater_errors(label) == ({1}, {0})
    teacher = SemanticTeacher(WordEncoder())
    annotation = teacher.annotate_lists(
        [["left pleural effusion", "cardiomegaly"]], [["left pleural effusion", "rib fracture"]]
    )[0]
    assert judged_errors(annotation) == ({1}, {1})


def test_extraction_counts_one_to_one_recoveries():
    scores = extraction_scores(
        [["small left effusion", "small left effusion"]], [["small left effusion"]], WordEncoder()
    )
    assert (scores["recovered"], scores["precision"], scores["recall"]) == (1, 0.5, 1.0)


def test_todays_filter_keeps_abnormal_statements():
    assert todays_findings("Heart size is normal. Small left pleural effusion. No pneumothorax.") == [
        "Small left pleural effusion"
    ]


def test_the_listed_findings_give_the_judge_its_best_case():
    """On RadPref's develop part (4 cases here), the stages' report has every part, and a judge given a candidate's
    own findings as the reference finds no error."""
    candidates = split_candidates(load_radpref(), "develop")[:8]
    encoder = WordEncoder()
    teacher = SemanticTeacher(encoder)
    extract = lambda texts: [todays_findings(t) for t in texts]  # noqa: E731
    report = findings_agreement(candidates, teacher, teacher, encoder, extract, 50)
    assert report["cases"] == 4
    assert set(report["report_tau_b"]) == {"statements", "extracted_findings", "listed_findings"}
    assert report["extraction"]["listed"] == sum(len(c.findings) for c in candidates) + sum(
        len(c.reference_findings) for c in candidates[::2]
    )
    assert 0 <= report["judge_on_listed_findings"]["false"]["judge_vs_majority"]["f1"] <= 1
    same = teacher.annotate_lists([c.findings for c in candidates], [c.findings for c in candidates])
    assert all(judged_errors(a) == (set(), set()) for a in same)


def test_clauses_split_at_coordinations_and_interpretations():
    from radmetrics.inference.findings.extractor import clauses

    assert clauses("Left lower lobe consolidation versus atelectasis") == [
        "Left lower lobe consolidation",
        "atelectasis",
    ]
    assert clauses("Opacity at the left base, consistent with pneumonia") == ["Opacity at the left base", "pneumonia"]
    assert clauses("Cardiomegaly") == ["Cardiomegaly"]


def test_hedged_clauses_keep_an_interpretation_and_a_hedge_with_the_finding_they_qualify():
    """judge=model's extraction: "consistent with" and "probably" stay with the finding, so the judge sees them."""
    from radmetrics.inference.findings.extractor import hedged_abnormality, hedged_clauses

    assert hedged_clauses("Left lower lobe consolidation with air bronchograms, consistent with pneumonia") == [
        "Left lower lobe consolidation",
        "air bronchograms, consistent with pneumonia",
    ]
    assert hedged_clauses("Bibasilar opacities, likely atelectasis") == ["Bibasilar opacities, likely atelectasis"]
    assert hedged_clauses("Left basilar airspace disease; aspiration not excluded") == [
        "Left basilar airspace disease",
        "aspiration not excluded",
    ]
    # a hedge of exclusion is not a negation: the clause names an abnormality under a strong hedge
    assert hedged_abnormality("Pulmonary edema is not excluded") and hedged_abnormality("aspiration not excluded")
    assert not hedged_abnormality("No pulmonary edema") and not hedged_abnormality("air bronchograms")


def test_hedged_clauses_keep_a_place_and_a_differential_with_their_finding():
    """As RadPref's radiologists list findings: where a finding spreads, and a differential, are part of it."""
    from radmetrics.inference.findings.extractor import hedged_clauses, place_only

    assert hedged_clauses(
        "Right-sided opacity, involving the right lower lobe and potentially the right middle lobe, consistent with"
        " pneumonia"
    ) == [
        "Right-sided opacity, involving the right lower lobe and potentially the right middle lobe, consistent with"
        " pneumonia"
    ]
    assert hedged_clauses("Bronchial wall thickening, which could indicate bronchitis or bronchiectasis") == [
        "Bronchial wall thickening, which could indicate bronchitis or bronchiectasis"
    ]
    assert hedged_clauses("Atelectasis versus scarring at the left base") == [
        "Atelectasis versus scarring at the left base"
    ]
    assert hedged_clauses("Vascular congestion, particularly prominent in the lower lung fields") == [
        "Vascular congestion, particularly prominent in the lower lung fields"
    ]
    # a size, and a device's tip, stay with their finding; a second finding after a size is still one
    assert hedged_clauses(
        "Spiculated left upper lobe mass, 2.8 cm in greatest dimension, concerning for malignancy"
    ) == ["Spiculated left upper lobe mass, 2.8 cm in greatest dimension, concerning for malignancy"]
    assert hedged_clauses("Right internal jugular central venous catheter, tip deep in the mid right atrium") == [
        "Right internal jugular central venous catheter, tip deep in the mid right atrium"
    ]
    assert hedged_clauses("Right upper lobe mass, 3 cm, and left effusion") == [
        "Right upper lobe mass, 3 cm",
        "left effusion",
    ]
    assert hedged_clauses("Cardiomegaly, tip of the iceberg") == ["Cardiomegaly", "tip of the iceberg"]  # no device
    # a second finding is still one
    assert hedged_clauses("Cardiomegaly with vascular congestion") == ["Cardiomegaly", "vascular congestion"]
    assert hedged_clauses("Left effusion, and prominent hila") == ["Left effusion", "prominent hila"]
    assert place_only("most prominent at the bases") and not place_only("small left effusion") and not place_only("")
    # beside a finding, a normal part after a semicolon goes; a negated list and a hedge of exclusion stay
    from radmetrics.inference.findings.extractor import finding_part

    assert finding_part("Patchy opacities in the right lower zone; the right upper zone is clear") == (
        "Patchy opacities in the right lower zone"
    )
    assert finding_part("No pleural effusion, pneumothorax, or cardiomegaly") == (
        "No pleural effusion, pneumothorax, or cardiomegaly"
    )
    assert (
        finding_part("Widened mediastinum; aortic injury not excluded")
        == "Widened mediastinum; aortic injury not excluded"
    )
    assert finding_part("Nodule, indeterminate; malignancy is a consideration and chest CT is recommended") == (
        "Nodule, indeterminate; malignancy is a consideration"
    )
    assert finding_part("Right upper lobe nodule and CT is recommended; small left effusion") == (
        "Right upper lobe nodule; small left effusion"
    )
    for kept in (
        "Cardiomegaly; no effusion, small pneumothorax",
        "Mild pulmonary edema; endotracheal tube tip in normal position 4 cm above the carina",
        "Cardiomegaly; no significant interval change",
    ):
        assert finding_part(kept) == kept
    for study_detail in ("History of asthma and COPD", "Limited by motion and low lung volumes"):
        assert finding_part(study_detail) == ""
    # a parenthetical hedge in a differential, "and/or", adjacent breaks, and an interpretation after a comma
    assert hedged_clauses("Atelectasis or, less likely, pneumonia") == ["Atelectasis or, less likely, pneumonia"]
    assert hedged_clauses("Atelectasis and/or consolidation at the left base") == [
        "Atelectasis and/or consolidation at the left base"
    ]
    assert hedged_clauses("Opacity, most prominently at the bases") == ["Opacity, most prominently at the bases"]
    assert hedged_clauses("Opacity at the left base, which may represent atelectasis, and cardiomegaly") == [
        "Opacity at the left base, which may represent atelectasis",
        "cardiomegaly",
    ]


def test_extractor_keeps_statements_and_splits_on_two_finding_clauses(tmp_path):
    """A hand-made head (probability from word cues): a statement over its threshold is kept whole unless two of its
    clauses pass theirs; saved and loaded, the head decides the same."""
    from radmetrics.inference.findings.extractor import FindingsExtractor, FindingsHead

    class CueEncoder:
        def encode(self, texts, batch_size=64, progress=False, desc=""):
            return np.array(
                [[float(any(w in t.lower() for w in ("effusion", "atelectasis", "consolidation")))] for t in texts]
            )

    weight = np.array([8.0, 0.0, 0.0, 0.0], dtype=np.float32)  # the cue, then the three rule features
    head = FindingsHead(weight, -4.0, "default", 0.5, 0.5)
    head.save(tmp_path)
    loaded = FindingsHead.load(tmp_path)
    assert np.allclose(loaded.weight, weight) and loaded.bias == -4.0
    extractor = FindingsExtractor(loaded, CueEncoder())
    found = extractor(["Heart size normal. Small left effusion and left basilar atelectasis. Left consolidation."])
    assert found == [["Small left effusion", "left basilar atelectasis", "Left consolidation"]]
    assert extractor(["No acute disease."]) == [[]]


def test_a_hedged_finding_is_kept_with_hedged_and_dropped_whole_without(tmp_path):
    """judge=model's extraction (`hedged`) keeps "X cannot be excluded" and drops only a statement's segments that are
    not findings (a recommendation); the default (what judge=rules reads) drops such a statement whole."""
    from radmetrics.inference.findings.extractor import FindingsExtractor, FindingsHead, finding_part

    assert finding_part("Right upper lobe opacity; a neoplasm cannot be excluded, CT recommended") == (
        "Right upper lobe opacity; a neoplasm cannot be excluded"
    )
    assert finding_part("Pneumothorax is excluded") == "" and finding_part("Limited study due to rotation") == ""

    class CueEncoder:
        def encode(self, texts, batch_size=64, progress=False, desc=""):
            return np.array([[float(any(w in t.lower() for w in ("pneumonia", "opacity")))] for t in texts])

    extractor = FindingsExtractor(FindingsHead(np.array([8.0, 0, 0, 0], dtype=np.float32), -4.0), CueEncoder())
    report = "Right lower lobe opacity; pneumonia cannot be excluded, follow-up recommended. Heart size normal."
    assert extractor([report]) == [[]]
    # both clauses pass this head's clause threshold, so the kept statement is split
    assert extractor([report], hedged=True) == [["Right lower lobe opacity", "pneumonia cannot be excluded"]]


def test_findings_command_refuses_a_missing_extractor_before_loading(tmp_path, capsys, monkeypatch):
    from radmetrics.inference.cli import main
    from radmetrics.inference.models import text_encoder

    def no_load(*args, **kwargs):
        raise AssertionError("the encoder loaded before the extractor was checked")

    monkeypatch.setattr(text_encoder.TextEncoder, "__init__", no_load)
    args = ["meta-eval", "findings", "--extractor", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]
    assert main(args) == 2 and "no such export" in capsys.readouterr().err


def test_findings_command_refuses_hedged_with_the_rules_before_loading(tmp_path, monkeypatch):
    from radmetrics.inference.cli import main
    from radmetrics.inference.models import text_encoder

    def no_load(*args, **kwargs):
        raise AssertionError("the encoder loaded before --hedged was checked")

    monkeypatch.setattr(text_encoder.TextEncoder, "__init__", no_load)
    args = ["meta-eval", "findings", "--extractor", "rules", "--hedged", "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit, match="--hedged need a trained extractor"):
        main(args)


def test_with_hedged_a_device_tip_and_a_hedged_abnormality_are_findings_whatever_the_head_says():
    """RadPref's radiologists list every device placement as a finding; judge=model's extraction keeps a statement
    that places a tip, or names an abnormality under a strong hedge, even where the head drops it. The default
    (judge=rules) does not."""
    from radmetrics.inference.findings.extractor import FindingsExtractor, FindingsHead, by_rule, places_tip

    assert places_tip("Dobhoff tip terminating in the descending duodenum")
    assert places_tip("Endotracheal tube tip 4.5 cm above carina")
    assert not places_tip("Kerley B lines at the bases") and not places_tip("Sternotomy wires intact")
    assert by_rule("A small pneumothorax cannot be excluded") and not by_rule("No pneumothorax")

    class SilentEncoder:  # a head that keeps nothing
        def encode(self, texts, batch_size=64, progress=False, desc=""):
            return np.zeros((len(texts), 1))

    extractor = FindingsExtractor(FindingsHead(np.zeros(4, dtype=np.float32), -4.0), SilentEncoder())
    report = "Nasogastric tube tip in the distal esophagus. A small pneumothorax cannot be excluded. Lungs clear."
    assert extractor([report]) == [[]]
    assert extractor([report], hedged=True) == [
        ["Nasogastric tube tip in the distal esophagus", "A small pneumothorax cannot be excluded"]
    ]
    # "is not excluded" is a hedge, not a negation: kept, whole (to this head only one of its clauses is a finding)
    report = "Left basilar opacity; pulmonary edema is not excluded."
    assert extractor([report], hedged=True) == [["Left basilar opacity; pulmonary edema is not excluded"]]


def test_the_extended_reading_keeps_sentences_apart_and_reads_side_letters():
    """judge=model reads "R IJ CVC" as sides and words, and an expansion that starts a sentence stays capitalised, so
    "Portable AP. ETT tip ..." is two statements (the default reading, which judge=rules keeps, joins them)."""
    from radmetrics.inference.text.sentences import expand_abbreviations, statements

    text = "Portable AP. ETT tip 4.5 cm above carina. R IJ CVC, tip low SVC. Small L effusion. L1 intact."
    assert statements(expand_abbreviations(text, lobes=True, extended=True)) == [
        "Portable AP",
        "Endotracheal tube tip 4.5 cm above carina",
        "Right internal jugular central venous catheter, tip low SVC",
        "Small left effusion",
        "L1 intact",
    ]
    assert statements(expand_abbreviations(text))[0] == "Portable AP. endotracheal tube tip 4.5 cm above carina"
