"""The feature judge's inputs: what a finding says about each attribute (pair_features.frame), and the export's head
(feature_judge.FeatureHead) saved, loaded and refused when its features are not this version's."""

import json

import numpy as np
import pytest

from radmetrics.inference.findings.feature_judge import HEAD_FILE, FeatureHead, feature_rows
from radmetrics.inference.findings.judge_labels import JUDGE_LABELS
from radmetrics.inference.findings.pair_features import FEATURE_NAMES, frame, hedge_level, pair_features
from radmetrics.inference.loading.checkpoint import CheckpointError


def named(reference, candidate, cosine=0.9):
    return dict(zip(FEATURE_NAMES, pair_features(reference, candidate, cosine)))


def test_sizes_are_read_in_mm_and_a_distance_from_a_landmark_is_not_a_size():
    assert frame("Right hilar mass measuring 4.2 x 3.8 cm").sizes_mm == pytest.approx((42.0, 38.0))
    assert frame("12 mm nodule in the right middle lobe").sizes_mm == (12.0,)
    tip = frame("Endotracheal tube terminates 1 cm below the carina, in the right mainstem bronchus")
    assert tip.sizes_mm == () and tip.carina_cm == -1.0 and tip.device and "mainstem" in tip.malpositions


def test_a_size_within_tolerance_and_one_beyond_it_differ_only_in_size():
    same = named("12 mm nodule in the right middle lobe.", "1.2 cm RML nodule.")
    larger = named("8 mm nodule in the right lower lobe.", "18 mm nodule in the right lower lobe.")
    assert same["size_both"] == larger["size_both"] == 1.0
    assert same["size_relative_change"] == 0.0 and larger["size_relative_change"] == pytest.approx(1.25)
    assert same["lobes_differ"] == 0.0  # "RML" is read as the right middle lobe


def test_hedges_specificity_places_and_severity_are_read():
    assert named("Right upper lobe pneumonia.", "Possible right upper lobe pneumonia.")["hedge_level_gap"] == 2 / 3
    denied = named("Right upper lobe pneumonia.", "Right upper lobe opacity, unlikely to represent pneumonia.")
    assert denied["hedge_level_gap"] == 1.0 and denied["against_hedge_candidate"] == 1.0
    vague = named("Right upper lobe pneumonia.", "Right upper lobe opacity.")
    assert vague["diagnosis_made_vague"] == 1.0 and vague["vague_added"] == 1.0
    lobe = named("Right upper lobe consolidation.", "Right lower lobe consolidation.")
    assert lobe["lobes_differ"] == 1.0 and lobe["sides_swapped"] == 0.0
    assert named("Small left effusion.", "Small right effusion.")["sides_swapped"] == 1.0


def test_a_diagnosis_is_made_vague_only_when_a_vaguer_description_of_it_stands_in_its_place():
    assert (
        named("Right lower lobe opacity, consistent with pneumonia.", "Right lower lobe opacity.")[
            "diagnosis_made_vague"
        ]
        == 1.0
    )
    assert named("Pulmonary edema.", "Increased interstitial markings.")["diagnosis_made_vague"] == 1.0
    # a compound finding against one of its parts: cardiomegaly is absent, not described more vaguely
    part = named("Cardiomegaly with mild pulmonary vascular congestion.", "Mild vascular congestion.")
    assert part["diagnoses_dropped"] == 1.0 and part["diagnosis_made_vague"] == 0.0
    over = named("Right upper lobe opacity.", "Right upper lobe pneumonia.")
    assert over["description_made_diagnosis"] == 1.0 and over["vague_dropped"] == 1.0  # overinterpretation


@pytest.mark.parametrize(
    "hedged, level",
    [
        ("Pneumonia cannot be ruled out.", 2),
        ("Cannot exclude a small pneumothorax.", 2),
        ("Findings could reflect early pneumonia.", 2),
        ("Question of a small left effusion.", 2),
        ("Presumed atelectasis at the left base.", 1),
        ("Findings favor atelectasis.", 1),
        ("Left basilar atelectasis.", 0),
        ("A catheter may project over the inferior vena cava.", 2),
        ("Patchy right lower lobe opacity ?aspiration.", 2),
        ("Doubt interstitial edema.", 3),
        ("Consolidation, unlikely to represent pneumonia.", 3),
        ("Mass, highly suspicious for malignancy.", 1),
        ("Pneumonia cannot be entirely excluded.", 2),
        ("Opacity thought to represent atelectasis.", 1),
    ],
)
def test_hedges_are_read_by_strength(hedged, level):
    found = frame(hedged)
    assert hedge_level(found) == level
    segment = named(
        "Cavitary lesion in the superior segment of the right lower lobe.",
        "Cavitary lesion in the posterior basal segment of the right lower lobe.",
    )
    assert segment["segments_differ"] == 1.0 and segment["lobes_differ"] == 0.0
    severity = named("Moderate right pleural effusion.", "Large right pleural effusion.")
    assert severity["severities_differ"] == 1.0 and severity["cosine"] == pytest.approx(0.9)


def test_a_paraphrase_differs_in_no_attribute():
    values = named("8 mm nodule in the right lower lobe.", "Right lower lobe nodule measuring 8 mm.")
    from radmetrics.inference.findings.feature_judge import EVIDENCE

    assert [n for names in EVIDENCE.values() for n in names if values[n]] == []


def random_head(rng, hidden=5) -> FeatureHead:
    n = len(FEATURE_NAMES)
    return FeatureHead(
        rng.normal(size=n).astype(np.float32),
        np.abs(rng.normal(size=n)).astype(np.float32) + 1,
        rng.normal(size=(n, hidden)).astype(np.float32),
        rng.normal(size=hidden).astype(np.float32),
        rng.normal(size=(hidden, len(JUDGE_LABELS))).astype(np.float32),
        rng.normal(size=len(JUDGE_LABELS)).astype(np.float32),
    )


def test_the_head_saves_loads_and_refuses_other_features(tmp_path):
    head = random_head(np.random.default_rng(0))
    head.save(tmp_path / "judge")
    loaded = FeatureHead.load(tmp_path / "judge")
    rows = feature_rows([("Small left effusion.", "Large left effusion.")], [0.9])
    np.testing.assert_array_equal(loaded.probabilities(rows), head.probabilities(rows))
    assert loaded.probabilities(rows).sum() == pytest.approx(1.0, abs=1e-5)
    config = json.loads((tmp_path / "judge" / HEAD_FILE).read_text())
    config["features"] = config["features"][:-1]
    (tmp_path / "judge" / HEAD_FILE).write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="other pair features"):
        FeatureHead.load(tmp_path / "judge")


def test_tip_places_are_read_whatever_the_wording():
    """One place however it is written (the SVC/RA junction is the cavoatrial junction), a good place read before the
    malposition it names ("beyond the GE junction" is in the stomach), a distance without "the", and how far to move
    a device is not a size."""
    same_place = named("PICC tip at the cavoatrial junction.", "PICC terminating at the SVC/right atrial junction.")
    assert same_place["tip_places_differ"] == 0.0 and same_place["tip_misplacement_differs"] == 0.0
    beyond = frame("Nasogastric tube tip beyond the GE junction")
    assert beyond.malpositions == frozenset() and beyond.good_places == {"beyond the gastroesophageal junction"}
    assert frame("Endotracheal tube tip 3 cm above carina").carina_cm == 3.0
    moved = frame("Endotracheal tube tip 9 cm above the carina; advancing it by 3 to 4 cm is advised")
    assert moved.sizes_mm == () and moved.carina_cm == 9.0
    pacer = frame("Pacer leads in the RA appendage and at the RV apex")
    assert pacer.malpositions == frozenset()
    assert pacer.good_places == {"right atrial appendage", "right ventricular apex"}


def test_a_tip_moved_out_of_its_place_differs_whether_said_by_distance_or_landmark():
    low = named("Endotracheal tube tip 1 cm above the carina.", "Endotracheal tube in satisfactory position.")
    assert low["tip_misplaced_reference"] == 1.0 and low["tip_misplaced_candidate"] == 0.0
    assert low["tip_misplacement_differs"] == 1.0
    both_good = named("Endotracheal tube tip 4 cm above the carina.", "Endotracheal tube tip in the mid trachea.")
    assert both_good["tip_misplacement_differs"] == 0.0


def test_the_lingula_is_part_of_the_left_upper_lobe_and_a_cavity_is_cavitary():
    assert frame("Left upper lobe opacity in the lingular segments").lobes == {"lingula"}
    assert named("Cavitating lesion in the right upper lobe.", "Right upper lobe cavity.")["diagnoses_dropped"] == 0.0


def test_a_synonym_or_a_diagnosis_as_an_adjective_is_the_diagnosis_and_tension_dropped_is_vaguer():
    from radmetrics.inference.findings.pair_features import read_as_diagnoses

    assert (
        frame("Right upper zone 1.5 cm nodular opacity").diagnoses
        == frame("1.5 cm nodule, right upper zone").diagnoses
    )
    assert frame("Bibasilar opacities, most likely atelectatic").diagnoses == {"atelectasis"}
    assert frame("Mediastinal emphysema").diagnoses == frame("Pneumomediastinum").diagnoses == {"pneumomediastinum"}
    assert frame("Bilateral hilar adenopathy, classic for sarcoid").diagnoses == {"lymphadenopathy", "sarcoidosis"}
    # a nodular opacity made "opacity" is vaguer; "tension pneumothorax" made "pneumothorax" is too
    assert named("Right upper zone nodular opacity.", "Right upper zone opacity.")["diagnosis_made_vague"] == 1.0
    assert named("Large left tension pneumothorax.", "Large left pneumothorax.")["diagnosis_made_vague"] == 1.0
    assert named("Large left pneumothorax.", "Large left pneumothorax, increased.")["diagnosis_made_vague"] == 0.0
    # what the matcher embeds with judge=model: the diagnosis a description names, in any case
    assert read_as_diagnoses("Enlarged cardiac silhouette. Lungs clear.") == "cardiomegaly. Lungs clear."
    assert read_as_diagnoses("Mediastinal Emphysema") == "pneumomediastinum"
    assert read_as_diagnoses("Right lower lobe opacity") == "Right lower lobe opacity"


def test_the_edges_of_reading_synonyms_and_qualifiers():
    """A coordinated adjective, a negated prefix and a place named after free air are not read as the diagnosis; a
    qualifier dropped with the diagnosis it qualifies is a finding fewer, not a vaguer one."""
    from radmetrics.inference.findings.pair_features import read_as_diagnoses

    assert "nodule" not in frame("Reticular and nodular opacities at both bases").diagnoses
    assert "pneumonia" not in frame("Non-infectious consolidation in the left lower lobe").diagnoses
    assert read_as_diagnoses("Non-infectious consolidation") == "Non-infectious consolidation"
    assert read_as_diagnoses("Free air under the right hemidiaphragm.") == "pneumoperitoneum."
    assert read_as_diagnoses("Free air under the right and left hemidiaphragms.") == "pneumoperitoneum."
    assert read_as_diagnoses("Free air under the diaphragm") == "pneumoperitoneum"
    assert frame("Right upper lobe mass and nodular opacities in the left lung").diagnoses == {"mass", "nodule"}
    assert named("Tension pneumothorax with atelectasis.", "Atelectasis.")["diagnosis_made_vague"] == 0.0
    assert (
        named("Tension pneumothorax with atelectasis.", "Pneumothorax with atelectasis.")["diagnosis_made_vague"]
        == 1.0
    )


def test_a_spared_place_is_not_where_the_finding_is_and_levels_sharing_a_noun_are_each_read():
    spared = frame("Patchy opacities involve the right middle and lower zones, sparing the right upper zone")
    assert (
        spared.zones
        == frame("Patchy airspace opacities in the right mid and lower zones").zones
        == {"middle", "lower"}
    )
    assert frame("Right middle and lower lobe pneumonia").lobes == {"middle lobe", "lower lobe"}
    assert frame("Opacities in the mid and lower lungs").zones == {"middle", "lower"}
    assert frame("Diffuse opacities sparing the apices and involving the bases").zones == {"lower"}
    assert frame("Opacities in the right lower lobe; the right upper lobe is spared").lobes == {"lower lobe"}
    assert frame("Opacities without sparing of the bases").zones == {"lower"}
    assert frame("Opacities in the right lower zone, sparing the left lung").sides == {"right"}
    assert frame("Opacities in the upper, mid and lower zones").zones == {"upper", "middle", "lower"}
    assert frame("Opacities in the mid to lower zones").zones == {"middle", "lower"}


def test_the_size_now_is_read_and_a_prior_size_is_history():
    assert frame("Right hilar mass measuring 5.2 cm, increased from 4.9 cm.").sizes_mm == (52.0,)
    assert frame("Right hilar mass, now 52 mm (previously 49 mm).").sizes_mm == (52.0,)
    assert frame("LLL nodule 1.1 cm, 1.0 cm on the prior.").sizes_mm == (11.0,)
    assert frame("Mass now 2.5 cm, compared to 2.0 cm previously.").sizes_mm == (25.0,)
    # a comparison that names no prior size, and "was", leave the size now alone
    assert frame("Right upper lobe nodule, unchanged from prior measuring 8 mm.").sizes_mm == (8.0,)
    assert frame("The nodule was 8 mm in diameter.").sizes_mm == (8.0,)


def test_a_tip_beyond_the_carina_is_below_it_and_a_lobe_collapse_is_atelectasis_but_not_a_vertebral_one():
    assert frame("Endotracheal tube tip in the right mainstem bronchus, 1.5 cm beyond the carina.").carina_cm == -1.5
    assert frame("Endotracheal tube tip 2 cm past the carina.").carina_cm == -2.0
    assert frame("Complete collapse of the left lower lobe.").diagnoses == frozenset({"atelectasis"})
    assert frame("Vertebral body collapse at T8.").diagnoses == frozenset({"collapse"})


def test_where_something_is_pushed_and_the_names_of_veins_and_limbs_are_not_the_findings_place():
    shifted = frame("Large left pneumothorax with the mediastinum shifted to the right")
    assert shifted.sides == frozenset({"left"}) and shifted.side_words == (1, 0)
    assert frame("Left tension pneumothorax with rightward mediastinal shift").sides == frozenset({"left"})
    assert frame("Right effusion with shift of the mediastinum to the left").sides == frozenset({"right"})
    assert frame("Left lower lobe collapse").sides == frozenset({"left"})  # no shift: the side stays
    # where the push is the finding, its side stays: a reversed shift or the other mainstem bronchus is no restatement
    assert frame("Mediastinal shift to the right").sides == frozenset({"right"})
    assert frame("Tracheal deviation to the left").side_words == (1, 0)
    assert frame("Endotracheal tube displaced into the right mainstem bronchus").sides == frozenset({"right"})
    assert frame("Nasogastric tube deviates to the right of midline").sides == frozenset({"right"})
    picc = frame("Right upper extremity PICC terminating at the SVC/right atrial junction")
    assert picc.segments == frozenset() and picc.zones == frozenset() and picc.sides == frozenset({"right"})


def test_a_density_is_an_opacity_free_subdiaphragmatic_gas_pneumoperitoneum_and_the_lingula_a_segment():
    assert frame("Linear density at the left lung base").words >= {"opacity"}
    assert frame("Small volume of subdiaphragmatic free gas").diagnoses == frozenset({"pneumoperitoneum"})
    assert frame("Subdiaphragmatic gas in the colon").diagnoses == frozenset()  # bowel gas is no pneumoperitoneum
    assert "opacity" not in frame("Decreased bone density").words  # nor bone density an opacity
    assert "opacity" not in frame("Lucency of air density").words
    assert frame("Inferior lingula consolidation").segments == frame("Inferior lingular segment opacity").segments
    assert frame("Superior lingula consolidation").segments == frozenset({"superior lingular"})


def test_a_tip_distance_given_as_before_is_history_not_where_the_tip_is_now():
    assert frame("Endotracheal tube was 6 cm above the carina, now 2 cm above the carina.").carina_cm == 2.0
    assert frame("Endotracheal tube tip previously 1 cm above the carina, now 4 cm above the carina.").carina_cm == 4.0
    assert frame("Endotracheal tube tip 2 cm above the carina (previously 6 cm above the carina).").carina_cm == 2.0
    on_the_prior = "Endotracheal tube tip 5 cm above the carina on the prior study, now 2 cm above the carina."
    assert frame(on_the_prior).carina_cm == 2.0
    assert frame("Endotracheal tube tip 5 cm above the carina.").carina_cm == 5.0


@pytest.mark.parametrize(
    "hedged, level",
    [
        ("Probably not pneumonia.", 3),
        ("Pneumonia is not likely.", 3),
        ("No doubt pneumonia.", 0),
        ("Findings strongly suggest pneumonia.", 1),
        ("Mass, very concerning for malignancy.", 1),
        ("Atelectasis or, less likely, pneumonia.", 2),
        ("Pneumonia less likely.", 3),
        ("Right lower lobe opacity, pneumonia less likely.", 3),
    ],
)
def test_the_far_end_and_emphasis_of_the_hedge_scale(hedged, level):
    assert hedge_level(frame(hedged)) == level


@pytest.mark.parametrize(
    "finding, percents",
    [
        ("Cardiothoracic ratio of 0.45.", (45.0,)),
        ("CTR: 0.55", (55.0,)),
        ("CTR 58%", (58.0,)),
        ("Right pneumothorax occupying approximately 20 percent of the hemithorax.", (20.0,)),
        ("The cardiothoracic ratio is now 0.6 (previously 0.5).", (60.0,)),  # the prior is no ratio of its own
        ("Nodule measuring 1.2 cm, ratio 1.2 cm.", ()),
        ("5 mm nodule in the right upper lobe.", ()),
    ],
)
def test_ratios_and_percentages_are_read_as_percentages(finding, percents):
    assert frame(finding).percents == percents


def test_a_cardiothoracic_ratio_across_one_half_is_a_feature_of_its_own():
    names = list(FEATURE_NAMES)
    across = names.index("percent_across_half")
    assert pair_features("CTR 0.48.", "CTR 0.55.", 0.9)[across] == 1.0
    assert pair_features("CTR 0.52.", "CTR 0.55.", 0.9)[across] == 0.0
    assert pair_features("CTR 0.52.", "Cardiothoracic ratio 52%.", 0.9)[names.index("percent_difference_tens")] == 0.0


def test_a_ratio_that_differs_is_evidence_of_a_measurement_error_and_one_written_otherwise_is_not():
    from radmetrics.inference.findings.feature_judge import evidence_mask

    measurement = JUDGE_LABELS.index("attribute:measurement:significant")
    rows = np.array(
        [
            pair_features("Cardiothoracic ratio of 0.45.", "Cardiothoracic ratio of 0.65.", 0.95),
            pair_features("Cardiothoracic ratio of 0.55.", "The cardiothoracic ratio is 55%.", 0.95),
        ]
    )
    assert evidence_mask(rows)[:, measurement].tolist() == [True, False]


def test_a_large_step_of_certainty_is_a_feature_and_a_neighbouring_one_is_not():
    large = list(FEATURE_NAMES).index("hedge_step_large")
    assert pair_features("Right lower lobe pneumonia.", "Possible right lower lobe pneumonia.", 0.9)[large] == 1.0
    assert pair_features("Right lower lobe pneumonia.", "Likely right lower lobe pneumonia.", 0.9)[large] == 0.0
    assert pair_features("Likely pneumonia.", "Pneumonia less likely.", 0.9)[large] == 1.0


def test_two_wordings_of_one_device_share_its_kind_and_two_devices_do_not():
    assert frame("The tip of the catheter is in the lower SVC.").device_kinds == {"venous"}
    assert frame("OG tube tip in the fundus of the stomach.").device_kinds == {"enteric"}
    shared, disjoint = (list(FEATURE_NAMES).index(n) for n in ("device_kind_shared", "device_kinds_disjoint"))
    one = pair_features("Right internal jugular central catheter in the SVC.", "The catheter tip is in the SVC.", 0.7)
    two = pair_features("Orogastric tube in the stomach.", "Endotracheal tube 5 cm above the carina.", 0.7)
    assert (one[shared], one[disjoint], two[shared], two[disjoint]) == (1.0, 0.0, 0.0, 1.0)
