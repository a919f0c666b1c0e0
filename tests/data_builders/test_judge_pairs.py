"""The finding-pair judge's training pairs: labels from logged edits, splits that share no finding."""

from __future__ import annotations

import json
import random

import pytest

from radmetrics.data_builders.corpus.corpora import Report
from radmetrics.data_builders.corpus.splits import normalise_report_text
from radmetrics.data_builders.judge_pairs.attributes import (
    AGAINST,
    certainty,
    certainty_error,
    laterality,
    negation,
    severity,
    specificity,
)
from radmetrics.data_builders.judge_pairs.build import build_judge_pairs, findings_by_split
from radmetrics.data_builders.judge_pairs.measurement import (
    DEVICES,
    change_measurement,
    change_percent,
    device_position_pair,
    percent_change,
    size_change,
    synthetic_percent_findings,
    two_devices_pair,
)
from radmetrics.data_builders.judge_pairs.rewrites import change_unit, percent_form, tolerated_measurement
from radmetrics.inference.findings.judge_labels import JUDGE_LABELS, parse_label
from radmetrics.inference.findings.pair_features import frame

REPORTS = [
    Report(
        id="1",
        findings="Moderate right pleural effusion. 8 mm nodule in the right lower lobe.",
        impression="",
        source="test",
    ),
    Report(id="2", findings="Right upper lobe pneumonia. No pneumothorax.", impression="", source="test"),
    Report(
        id="3",
        findings="Small left pleural effusion. Mild cardiomegaly. Increased left basilar opacity.",
        impression="",
        source="test",
    ),
    Report(
        id="4", findings="No pneumothorax. Calcified granuloma in the left upper lobe.", impression="", source="test"
    ),
]


def test_size_tolerance():
    assert size_change(8, 9) == "same"  # within 2 mm
    assert size_change(40, 46) == "same"  # within 20%
    assert size_change(10, 13) == "insignificant"
    assert size_change(8, 18) == "significant"  # the first row


def test_edits_carry_their_labels():
    rng = random.Random(0)
    text, significant = change_measurement("8 mm nodule in the right lower lobe.", rng)
    assert text != "8 mm nodule in the right lower lobe." and isinstance(significant, bool)
    assert laterality("Right upper lobe pneumonia.", rng) == ("Left upper lobe pneumonia.", "contradiction:laterality")
    assert negation("No pneumothorax.", rng) == ("Pneumothorax is present.", "contradiction:negation")
    edited, label = severity("Moderate right pleural effusion.", rng)
    assert label == "attribute:severity:significant" and "moderate" not in edited.lower()
    assert severity("Minimal atelectasis.", random.Random(1))[1].startswith("attribute:severity:")
    edited, label = certainty("Right upper lobe pneumonia.", rng)
    assert label.startswith("attribute:certainty:") and edited != "Right upper lobe pneumonia."
    assert certainty("Possible right upper lobe pneumonia.", rng) == (
        "Right upper lobe pneumonia.",
        "attribute:certainty:significant",
    )
    edited, label = specificity("Right upper lobe pneumonia.", rng)
    assert label == "attribute:specificity:significant" and "pneumonia" not in edited
    # a diagnosis or a description already named is not named again ("tension tension pneumothorax")
    assert all(
        "tension tension" not in specificity("Large left tension pneumothorax.", random.Random(seed))[0]
        for seed in range(20)
    )
    assert all(
        "likely opacity" not in specificity("Right lower lobe opacity, likely pneumonia.", random.Random(seed))[0]
        for seed in range(20)
    )
    assert change_unit("8 mm nodule.", rng) == ("0.8 cm nodule.", "unit")
    assert tolerated_measurement("8 mm nodule.", rng)[1] == "measurement_within_tolerance"


def test_a_certainty_edit_changes_the_certainty_or_is_not_made():
    rng = random.Random(0)
    # a second hedge would stay, or the hedge is one the edit cannot remove: no pair
    assert certainty("Opacity which may be atelectasis and possible infiltrate.", rng) is None
    assert certainty("Bibasilar atelectasis versus scarring.", rng) is None
    # dropping a weak hedge is an insignificant certainty error, dropping a strong one a significant one
    assert certainty("Likely right lower lobe pneumonia.", rng) == (
        "Right lower lobe pneumonia.",
        "attribute:certainty:insignificant",
    )
    assert certainty("Suspected right lower lobe pneumonia.", rng)[1] == "attribute:certainty:significant"


def test_recommendations_are_not_edited_as_findings():
    rng = random.Random(0)
    assert negation("If indicated consider dedicated right shoulder films.", rng) is None
    assert laterality("Recommend dedicated views of the right ribs.", rng) is None


def test_held_out_findings_never_in_train():
    splits = {"1": "train", "2": "test", "3": "validation", "4": "train"}
    found = findings_by_split(REPORTS, splits)
    train = {normalise_report_text(t) for t, _ in found["train"]}
    held_out = {normalise_report_text(t) for s in ("validation", "test") for t, _ in found[s]}
    assert "no pneumothorax" in train and not train & held_out  # shared by a train and a test report: train only


def test_build_is_deterministic_and_labelled():
    splits = {"1": "train", "2": "test", "3": "validation", "4": "train"}
    first = build_judge_pairs(REPORTS, splits, per_label=50, seed=0)
    again = build_judge_pairs(REPORTS, splits, per_label=50, seed=0)
    assert [p.to_dict() for p in first["train"]] == [p.to_dict() for p in again["train"]]
    for split, pairs in first.items():
        for pair in pairs:
            assert pair.label in JUDGE_LABELS and pair.split == split
            assert parse_label(pair.label).decision == pair.decision
    train_keys = {(p.reference, p.candidate) for p in first["train"]}
    assert not any((p.reference, p.candidate) in train_keys for p in first["test"])


def test_command_writes_splits_and_card(tmp_path):
    import argparse

    from radmetrics.data_builders.cli import add_arguments, run

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    table = tmp_path / "reports.csv"
    table.write_text(
        "id,findings,impression\n" + "".join(f'{r.id},"{r.findings}",\n' for r in REPORTS), encoding="utf-8"
    )
    out = tmp_path / "pairs"
    args = parser.parse_args(
        ["judge-pairs", "--kind", "table", "--path", str(table), "--per-label", "20", "--out", str(out)]
    )
    assert run(args) == 0
    stats = json.loads((out / "stats.json").read_text())
    assert sum(stats["pairs"].values()) == sum(
        1 for s in ("train", "validation", "test") for _ in open(out / f"{s}.jsonl")
    )
    assert "Finding-pair judge" in (out / "README.md").read_text()
    with pytest.raises(SystemExit):
        parser.parse_args(["judge-pairs", "--per-label", "0", "--out", str(out)])


def test_device_tips_are_edited_both_ways_and_judged_by_place():
    """Either side may hold the malposition, a tip may be placed by distance or by landmark, and a place said another
    way is the same; too high against too low is significant."""
    from radmetrics.data_builders.judge_pairs.measurement import DEVICES, _tip_verdict, device_position_pair

    rng = random.Random(0)
    made = [device_position_pair(rng) for _ in range(400)]
    assert {verdict for _, _, verdict in made} == {"same", "insignificant", "significant"}
    bad = [place for _, malpositions in DEVICES.values() for place in malpositions]
    assert any(any(place in r for place in bad) and v == "significant" for r, _, v in made)  # reference malpositioned
    assert _tip_verdict(("9.5 cm above the carina", True, 9.5), ("1 cm below the carina", True, -1.0)) == "significant"
    assert _tip_verdict(("4 cm above the carina", False, 4.0), ("4.5 cm above carina", False, 4.5)) == "same"
    assert _tip_verdict(("in the stomach", False, None), ("in satisfactory position", False, None)) == "same"


def test_a_certainty_edit_may_swap_the_hedge_for_another():
    """A strong hedge replaced by a weak one ("possible" -> "probable") or one against ("unlikely") is an
    insignificant certainty error, dropping it a significant one; another strong one is the same finding."""
    made = {}
    for seed in range(60):
        found = certainty("Possible right lower lobe pneumonia.", random.Random(seed))
        if found:
            made.setdefault(found[1], set()).add(found[0])
    assert set(made) == {"same", "attribute:certainty:significant", "attribute:certainty:insignificant"}
    assert made["attribute:certainty:significant"] == {"Right lower lobe pneumonia."}
    weak = ("Probable", "Likely", "Presumed", "Most likely", "Findings favor", "Right lower lobe pneumonia,")
    weak += ("Findings highly suspicious", "Right lower lobe pneumonia is", "Findings are unlikely")  # or against
    assert all(text.startswith(weak) for text in made["attribute:certainty:insignificant"])


def test_a_hedge_against_a_finding_is_a_significant_certainty_error_against_a_definite_or_probable_one():
    assert certainty_error(0, AGAINST, True) == "attribute:certainty:significant"
    assert certainty_error(1, AGAINST, True) == "attribute:certainty:significant"
    assert certainty_error(2, AGAINST, True) == "attribute:certainty:insignificant"
    assert certainty_error(0, 1, True) == "attribute:certainty:insignificant"
    assert certainty_error(0, 2, False) == "attribute:certainty:insignificant"
    assert certainty_error(2, 2, True) == "same"


def test_a_hedge_qualified_by_the_word_before_it_is_not_stripped_alone():
    rng = random.Random(0)
    assert certainty("Pneumonia is not likely.", rng) is None  # never "Pneumonia is not ."
    assert (
        certainty("Very likely right lower lobe pneumonia.", rng) is None
    )  # never "Very right lower lobe pneumonia."


@pytest.mark.parametrize(
    "before, after, verdict",
    [(52, 53, "same"), (20, 23, "same"), (20, 25, "insignificant"), (45, 65, "significant"), (10, 30, "significant")]
    + [(48, 55, "significant"), (55, 48, "significant"), (30, 40, "significant")],
)
def test_ratio_and_percentage_tolerance(before, after, verdict):
    assert percent_change(before, after) == verdict


def test_ratios_and_percentages_are_edited_and_rewritten_as_the_frame_reads_them():
    rng = random.Random(3)
    findings = synthetic_percent_findings(rng, 40)
    assert any("ratio" in f.lower() or "CTR" in f for f in findings) and any("pneumothorax" in f for f in findings)
    edited = rewritten = 0
    for finding in findings:
        (before,) = frame(finding).percents
        changed = change_percent(finding, rng)
        if changed:
            edited += 1
            (after,) = frame(changed[0]).percents
            assert (
                changed[1] == (percent_change(before, after) == "significant")
                and percent_change(before, after) != "same"
            )
        same = percent_form(finding, rng)
        if same:
            rewritten += 1
            (after,) = frame(same[0]).percents
            assert percent_change(before, after) == "same", (finding, same)
    assert edited > 20 and rewritten == len(findings)


def test_two_different_devices_are_an_unrelated_pair_and_one_device_may_be_named_otherwise():
    rng = random.Random(0)
    for _ in range(20):
        first, second = two_devices_pair(rng)
        named = [{d for d in DEVICES if d.lower() in text.lower()} for text in (first, second)]
        assert all(named) and named[0] != named[1]
    renamed = [device_position_pair(rng) for _ in range(60)]
    assert any(
        frame(r).device_kinds == frame(c).device_kinds and r.split()[:2] != c.split()[:2] for r, c, _ in renamed
    )
