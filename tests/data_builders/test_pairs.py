import json
from collections import defaultdict

import pytest

from radmetrics.data_builders.corpus.corpus_io import assign_splits
from radmetrics.data_builders.pairs.builders import HEURISTICS, build_pairs, normalise_sentence
from radmetrics.data_builders.pairs.dataset import pairs_explanation, write_pairs
from radmetrics.data_builders.pairs.programmatic_teacher import (
    EXPLANATIONS,
    counts_from_edits,
    programmatic_annotation,
    verdict,
    walkthrough,
)
from radmetrics.inference.metrics.green.format import parse_green_response
from radmetrics.inference.text.sentences import split_sentences
from radmetrics.training.common.run_dir import mark_complete

FAST = ("random", "remove_shuffle", "radgraph_permute", "recombine")


def test_sentence_splitting():
    assert split_sentences("1. Left PICC tip in the brachiocephalic vein.2. Mild pulmonary vascular congestion.") == [
        "Left PICC tip in the brachiocephalic vein.",
        "Mild pulmonary vascular congestion.",
    ]
    assert split_sentences("Nodule of 2.5 cm in the right upper lobe. No effusion.Mild edema, e.g. at the bases.") == [
        "Nodule of 2.5 cm in the right upper lobe.",
        "No effusion.",
        "Mild edema, e.g. at the bases.",
    ]
    assert split_sentences("Nodule 2.5 cm. No effusion. Mild edema.", "fineradscore") == [
        "Nodule 2.5 cm",
        "No effusion",
        "Mild edema.",
    ]


@pytest.fixture(scope="module")
def iu_pairs(iu_reports):
    splits = assign_splits(iu_reports)
    return splits, build_pairs(iu_reports, splits, FAST, per_heuristic=2000, progress=False)


def test_at_least_2000_pairs_per_heuristic_without_leakage(iu_pairs, iu_reports):
    splits, pairs = iu_pairs
    counts = defaultdict(int)
    for p in pairs:
        counts[p.heuristic] += 1
        assert p.split == splits[p.reference_id]
        if p.donor_id is not None:  # text borrowed from another report stays inside the split
            assert splits[p.donor_id] == p.split
    assert all(counts[h] >= 2000 for h in FAST), counts
    assert len({(p.reference_id, p.candidate.lower()) for p in pairs}) == len(pairs)
    assert len({p.id for p in pairs}) == len(pairs)
    shares = {s: sum(p.split == s for p in pairs) / len(pairs) for s in ("train", "validation", "test")}
    assert 0.75 < shares["train"] < 0.85 and 0.07 < shares["test"] < 0.13


@pytest.mark.parametrize("explanation", EXPLANATIONS)
def test_every_annotation_round_trips_through_the_green_parser(iu_pairs, explanation):
    _, pairs = iu_pairs
    for p in pairs:
        parsed = parse_green_response(programmatic_annotation(p, explanation)["response"])
        sig, insig = counts_from_edits(p.edits)
        assert parsed.parsed, (p.id, parsed.problems)
        assert (parsed.significant, parsed.insignificant, parsed.matched) == (
            sig,
            insig,
            len(p.matched_findings),
        ), p.id


def test_the_walkthrough_gives_every_sentence_a_verdict_before_the_counts(iu_pairs):
    _, pairs = iu_pairs
    for p in pairs:
        errors = [e for e in p.edits if e.category is not None]
        lines = walkthrough(p.candidate, errors, p.matched_findings)
        verdicts = [line.rsplit(": ", 1)[1] for line in lines]
        assert sum(v != "matched." for v in verdicts) == len(errors), p.id  # every error once, matched sentences aside
        assert sorted(v for v in verdicts if v != "matched.") == sorted(f"{verdict(e)}." for e in errors), p.id
        matched = {normalise_sentence(m) for m in p.matched_findings}
        for line in lines:  # a sentence called matched is one of the pair's matched findings (or repeats one)
            if line.endswith(": matched."):
                named = normalise_sentence(line.rsplit(": ", 1)[0].strip('"').removesuffix(" ...").removesuffix('"'))
                assert any(m.startswith(named) for m in matched) or any(
                    normalise_sentence(s).startswith(named) for s in split_sentences(p.reference)
                ), (p.id, line)
        explanation = programmatic_annotation(p, "walkthrough")["response"].split("\n\n")[0]
        assert explanation.rstrip().endswith(("clinically significant.", "reference report.", "not an error.")), p.id
    permuted = next(
        p
        for p in pairs
        if p.heuristic == "radgraph_permute" and any(e.category == "a" and e.significant for e in p.edits)
    )
    assert "(a) significant." in programmatic_annotation(permuted, "walkthrough")["response"]
    with pytest.raises(ValueError, match="explanation"):
        programmatic_annotation(permuted, "long")


def test_pairs_are_deterministic(iu_reports):
    reports = iu_reports[:200]
    splits = assign_splits(reports)
    a = [p.to_dict() for p in build_pairs(reports, splits, FAST, progress=False, seed=3)]
    b = [p.to_dict() for p in build_pairs(reports, splits, FAST, progress=False, seed=3)]
    assert json.dumps(a) == json.dumps(b)


def test_permutations_log_their_categories(iu_pairs):
    _, pairs = iu_pairs
    kinds = {(e.kind, e.category) for p in pairs if p.heuristic == "radgraph_permute" for e in p.edits}
    for kind, category in [
        ("flip_presence_to_absent", "b"),
        ("flip_presence_to_present", "a"),
        ("change_location", "c"),
        ("change_severity", "d"),
        ("insert_finding", "a"),
        ("add_comparison", "e"),
        ("drop_comparison", "f"),
    ]:
        assert (kind, category) in kinds


def test_nearest_neighbour_pairs(iu_reports):
    reports = [r for r in iu_reports if r.split == "test"][:120]
    splits = assign_splits(reports)
    pairs = build_pairs(reports, splits, ("nearest_neighbour",), progress=False)
    assert len(pairs) >= 100 and all(splits[p.donor_id] == p.split for p in pairs)


@pytest.mark.slow
def test_cli_builds_all_heuristics_on_iu(tmp_path):
    from radmetrics.inference.cli import main

    assert main(["data", "pairs", "--out", str(tmp_path), "--per-heuristic", "2000"]) == 0
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert all(stats["per_heuristic"][h] == 2000 for h in HEURISTICS)
    assert (tmp_path / "README.md").read_text().count("| nearest_neighbour |") == 1
    assert (tmp_path / "hf" / "dataset_dict.json").is_file()


def test_pretrain_corpus_is_deduplicated(tmp_path):
    from datasets import load_from_disk

    from radmetrics.inference.cli import main

    assert main(["data", "pretrain-corpus", "--out", str(tmp_path)]) == 0
    stats = json.loads((tmp_path / "stats.json").read_text())
    ds = load_from_disk(str(tmp_path / "hf"))
    texts = [" ".join(t.lower().split()) for split in ds for t in ds[split]["text"]]
    assert len(texts) == len(set(texts)) == stats["unique_texts"] < stats["reports_in"]
    assert all(stats["split_overlap"]["per_split"][split]["reports_in_train"] == 0 for split in ("validation", "test"))


def test_the_sft_recipe_refuses_pairs_built_with_another_explanation(iu_pairs, tmp_path):
    from radmetrics.training.green.sft import GreenDataArguments, load_annotations

    _, pairs = iu_pairs
    root = tmp_path / "pairs"  # where the recipe builds its pairs when pairs_dir is unset
    few = [p for split in ("train", "validation", "test") for p in [p for p in pairs if p.split == split][:20]]
    write_pairs(few, root, {"corpus": "iu_xray"}, "walkthrough")
    mark_complete(root)
    assert pairs_explanation(root) == "walkthrough"
    with pytest.raises(ValueError, match="walkthrough teacher explanation, not summary"):
        load_annotations(GreenDataArguments(teacher_explanation="summary"), str(tmp_path))
    data, _ = load_annotations(GreenDataArguments(teacher_explanation="walkthrough"), str(tmp_path))
    assert len(data["train"]) > 0


def test_the_pair_builders_share_the_metrics_normal_and_comparison_rule():
    """What is normal and what is a comparison is one rule, the semantic_green metric's: a pair builder's edit labels
    and the metric that scores a student agree ("Decreased lung volumes." is a finding, not a comparison, in both)."""
    from radmetrics.data_builders.pairs import edit_lexicons
    from radmetrics.inference.text import word_rules

    assert edit_lexicons.is_normal is word_rules.is_normal and edit_lexicons.is_comparison is word_rules.is_comparison
    assert edit_lexicons.is_abnormal_finding("Decreased lung volumes.") and not word_rules.is_comparison(
        "Decreased lung volumes."
    )
    assert not edit_lexicons.is_abnormal_finding("Stable appearance since the prior radiograph.")
