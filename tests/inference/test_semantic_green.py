"""The semantic GREEN teacher (inference/metrics/semantic_green): each category on hand-made pairs, a GREEN answer for
any pair that the GREEN parser reads back exactly, and every input a user has scored rather than refused."""

import json
from pathlib import Path

import pytest

from radmetrics.inference.metrics.green.format import parse_green_response
from radmetrics.inference.metrics.semantic_green.metric import SemanticGreen
from radmetrics.inference.metrics.semantic_green.teacher import Rules, SemanticTeacher
from radmetrics.inference.scoring.scorer import Scorer

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)

NORMAL = "Heart size is normal. Lungs are clear."
CATEGORY_PAIRS = {  # name: (reference, candidate, significant counts (a)-(f), insignificant counts (a)-(f))
    "false finding (a)": (NORMAL, NORMAL + " Right upper lobe pneumonia.", (1, 0, 0, 0, 0, 0), (0,) * 6),
    "missing finding (b)": (NORMAL + " Right upper lobe pneumonia.", NORMAL, (0, 1, 0, 0, 0, 0), (0,) * 6),
    "negated finding (b)": (
        "Left pleural effusion. Heart size is normal.",
        "No left pleural effusion. Heart size is normal.",
        (0, 1, 0, 0, 0, 0),
        (0,) * 6,
    ),
    "location (c)": (
        "Small left pleural effusion. Heart size is normal.",
        "Small right pleural effusion. Heart size is normal.",
        (0, 0, 1, 0, 0, 0),
        (0,) * 6,
    ),
    "severity (d)": (
        "Small left pleural effusion. Heart size is normal.",
        "Large left pleural effusion. Heart size is normal.",
        (0, 0, 0, 1, 0, 0),
        (0,) * 6,
    ),
    "comparison added (e)": (
        NORMAL,
        NORMAL + " Compared to the prior study, there is no change.",
        (0,) * 6,
        (0, 0, 0, 0, 1, 0),
    ),
    "comparison omitted (f)": (
        NORMAL + " Compared to the prior study, there is no change.",
        NORMAL,
        (0,) * 6,
        (0, 0, 0, 0, 0, 1),
    ),
    "normal statement missing": (NORMAL + " No pneumothorax.", NORMAL, (0,) * 6, (0, 1, 0, 0, 0, 0)),
}


@pytest.fixture(scope="module")
def teacher():
    from radmetrics.inference.models.text_encoder import TextEncoder

    return SemanticTeacher(TextEncoder("default"))


@pytest.mark.parametrize("name", list(CATEGORY_PAIRS))
def test_each_category(teacher, name):
    reference, candidate, significant, insignificant = CATEGORY_PAIRS[name]
    [annotation] = teacher([reference], [candidate])
    assert annotation.significant == significant and annotation.insignificant == insignificant, annotation.to_dict()


def test_identical_reports_have_no_errors(teacher):
    report = "Small left pleural effusion. Mild cardiomegaly. No pneumothorax. Compared to prior, stable."
    [annotation] = teacher([report], [report])
    assert annotation.errors == [] and annotation.matched == 4 and annotation.score == 1.0


def test_any_pair_gets_an_answer_the_green_parser_reads_back(teacher):
    references = [c[0] for c in CATEGORY_PAIRS.values()] + ["Mild cardiomegaly (stable); [sic] 1. line: x", "Normal."]
    candidates = [c[1] for c in CATEGORY_PAIRS.values()] + ["(a) False report: 3. [Matched Findings]: 9.", ""]
    for annotation in teacher(references, candidates):
        for quoted, explanation in ((False, "walkthrough"), (True, "walkthrough"), (True, "summary")):
            parsed = parse_green_response(annotation.response(quoted, explanation))
            assert parsed.parsed, parsed.problems
            assert (parsed.significant, parsed.insignificant, parsed.matched) == (
                annotation.significant,
                annotation.insignificant,
                annotation.matched,
            )
            assert parsed.score == pytest.approx(annotation.score)


def test_any_candidate_is_scored_not_refused():
    references = ["Small left pleural effusion. No pneumothorax."] * 4
    long_report = " ".join(
        f"Finding number {i} is a small nodule in the left lung." for i in range(500)
    )  # 5,000 words
    candidates = ["", "Effusion", long_report, "Épanchement pleural gauche. 少量胸腔积液. Heart size is normal ✓."]
    result = Scorer(["semantic_green"], n_bootstrap=0)(references, candidates)
    assert all(row["semantic_green"] is not None for row in result.per_sample)
    assert result.per_sample[0]["semantic_green_significant_errors"] == 1.0  # the effusion is missing
    assert result.per_sample[2]["semantic_green_significant_errors"] >= 500  # every nodule is a false finding
    assert len(result.details["semantic_green"][2]["candidate_statements"]) == 500


def test_threshold_is_an_option_that_changes_values():
    references, candidates = ["Heart size is normal. Lungs are clear."], ["The cardiac silhouette is unremarkable."]
    every = {"findings": "statements"}  # normal statements are findings of no one: match every statement
    loose = SemanticGreen(threshold=0.2, **every)(references, candidates).per_sample["semantic_green_matched_findings"]
    strict = SemanticGreen(threshold=0.95, **every)(references, candidates).per_sample[
        "semantic_green_matched_findings"
    ]
    assert loose == [1.0] and strict == [0.0]
    assert SemanticGreen.declared_options()["threshold"].changes_values
    assert Rules().threshold == SemanticGreen.options["threshold"].default


def test_the_reward_and_the_page_run_it(tmp_path):
    from radmetrics.inference.files.report_html import compact_detail
    from radmetrics.inference.scoring.rewards import MetricReward

    reward = MetricReward("semantic_green_significant_errors")
    assert reward(completions=["No pneumothorax.", NORMAL], reference=[NORMAL, NORMAL]) == [-0.0, -0.0]
    detail = Scorer(["semantic_green"], n_bootstrap=0)(
        [CATEGORY_PAIRS["location (c)"][0]], [CATEGORY_PAIRS["location (c)"][1]]
    ).details["semantic_green"][0]
    shown = compact_detail("semantic_green", detail)
    errors = next(t for t in shown["tables"] if t["caption"] == "errors, statement by statement")
    assert errors["rows"][0][:2] == ["(c)", "significant"] and "right" in errors["rows"][0][2]


def test_radpref_agreement_reproduces_the_committed_results(tmp_path):
    """The agreement command, for the metrics that need no training, gives exactly the committed figures (recorded
    with every statement matched, as semantic_green ran before findings-first: findings=statements)."""
    from radmetrics.inference.cli import main

    committed = json.loads(
        (Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "agreement_radpref_dev.json").read_text()
    )
    options = "--option semantic_green.findings=statements".split()
    assert main([*"meta-eval radpref --metrics semantic_green rougeL --out".split(), str(tmp_path), *options]) == 0
    fresh = json.loads((tmp_path / "agreement.json").read_text())
    added_since = {"semantic_green_weighted", "semantic_green_weighted_errors"}  # benchmarks/results/*_weighted_keys
    assert set(fresh["keys"]) - added_since <= set(committed["keys"]), "a key the committed results lack"
    for key, entry in fresh["keys"].items():
        assert key in added_since or entry == committed["keys"][key], key
    assert committed["keys"]["semantic_green_significant_errors"]["tau_b"] >= 0.60
    assert committed["keys"]["semantic_green_significant_errors"]["vs_rougeL"]["ci95"][0] > 0


def test_data_annotate_with_the_semantic_teacher_needs_no_endpoint_nor_split(tmp_path):
    pytest.importorskip("datasets", reason="radmetrics data writes Hugging Face datasets: the train extra")
    from radmetrics.inference.cli import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "\n".join(json.dumps({"reference": r, "candidate": c}) for r, c, _, _ in CATEGORY_PAIRS.values()) + "\n"
    )
    command = ["data", "annotate", "--pairs", str(pairs), "--units", "statements", "--split-by", "none", "--out"]
    command.append(str(tmp_path / "out"))
    assert main(command) == 0
    records = [json.loads(line) for line in (tmp_path / "out" / "annotations.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [str(i) for i in range(len(CATEGORY_PAIRS))]
    for record, (_, _, significant, insignificant) in zip(records, CATEGORY_PAIRS.values()):
        parsed = parse_green_response(record["response"])
        assert record["teacher"] == "semantic_green" and (parsed.significant, parsed.insignificant) == (
            significant,
            insignificant,
        )
    with pytest.raises(SystemExit, match="needs --endpoint"):
        main(["data", "annotate", "--pairs", str(pairs), "--teacher", "llm", "--out", str(tmp_path / "llm")])


def test_the_semantic_teacher_annotates_the_findings_semantic_green_judges(tmp_path):
    """By default the teacher judges each report's extracted findings, as `semantic_green` scores them: the records
    carry those findings, the response numbers them, its counts are the metric's, and the weighted error count is the
    metric's too."""
    pytest.importorskip("datasets", reason="radmetrics data writes Hugging Face datasets: the train extra")
    from radmetrics.inference.cli import main
    from radmetrics.inference.metrics.green.format import findings_prompt, prompt_reports

    reference = "Heart size is normal. Large right pneumothorax. Calcified granuloma."
    candidate = "Heart size is normal. Calcified granuloma. Mild cardiomegaly."
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"reference": reference, "candidate": candidate, "context": {"Age": "70"}}) + "\n")
    assert main(["data", "annotate", "--pairs", str(pairs), "--split-by", "none", "--out", str(tmp_path / "out")]) == 0
    [record] = [json.loads(line) for line in (tmp_path / "out" / "annotations.jsonl").read_text().splitlines()]
    assert record["teacher_units"] == "findings" and "Heart size is normal." not in record["reference_findings"]
    scored = Scorer(["semantic_green"], n_bootstrap=0)([reference], [candidate], context=[{"Age": "70"}]).per_sample[0]
    parsed = parse_green_response(record["response"])
    assert (
        sum(parsed.significant) == sum(record["counts"]["significant"]) == scored["semantic_green_significant_errors"]
    )
    assert (
        record["counts"]["weighted_errors"] == scored["semantic_green_weighted_errors"] == 1.5
    )  # urgent + actionable
    prompt = findings_prompt(*prompt_reports(record, "findings"))
    assert "R1: " in prompt and "C2: " in prompt and "Heart size" not in prompt


def test_builder_pairs_annotated_by_the_semantic_teacher(tmp_path, iu_reports):
    pytest.importorskip("datasets", reason="write_pairs writes Hugging Face datasets: the train extra")
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.data_builders.pairs.dataset import pairs_teacher, write_pairs

    reports = [r for r in iu_reports if r.text][:60]
    pairs = build_pairs(reports, assign_splits(reports), ["remove_shuffle", "radgraph_permute"], 10)
    write_pairs(pairs, tmp_path, {"corpus": "test"}, teacher="semantic")
    assert pairs_teacher(tmp_path) == "semantic"
    records = [
        json.loads(line)
        for split in ("train", "validation", "test")
        if (tmp_path / f"{split}.jsonl").is_file()
        for line in (tmp_path / f"{split}.jsonl").read_text().splitlines()
    ]
    assert len(records) == len(pairs) and all(r["teacher"] == "semantic_green" for r in records)
    assert all(parse_green_response(r["response"]).matched == r["counts"]["matched"] for r in records)


def test_the_frozen_split_is_the_seeded_draw_and_covers_every_case_once():
    """radpref_dev's frozen split (30 cases to develop on, 20 touched once) is the committed seeded draw."""
    from radmetrics.inference.meta_evaluation.radpref import draw_split, load_radpref, load_split, split_candidates

    candidates = load_radpref()
    ids = sorted({c.case_id for c in candidates})
    split = load_split()
    assert split == draw_split(ids)
    assert len(split["develop"]) == 30 and len(split["frozen"]) == 20
    assert sorted(split["develop"] + split["frozen"]) == ids
    assert len(split_candidates(candidates, "frozen")) == 40 and len(split_candidates(candidates, "all")) == 100


def findings_first(references, candidates):
    return Scorer(["semantic_green"], n_bootstrap=0)(references, candidates)


def test_no_flags_judge_the_shipped_extractors_findings_and_the_signature_names_it():
    result = findings_first(
        ["Heart size is normal. Small left pleural effusion."], ["Small left pleural effusion. No pneumothorax."]
    )
    signature = result.signatures["semantic_green"]
    assert "findings:extractor" in signature and "extractor:" in signature
    detail = result.details["semantic_green"][0]
    assert detail["reference_statements"] == ["Small left pleural effusion"] == detail["candidate_statements"]
    assert result.per_sample[0]["semantic_green"] == 1.0
    old = Scorer(["semantic_green"], metric_options={"semantic_green": {"findings": "statements"}}, n_bootstrap=0)
    assert "findings:statements" in old.signatures()["semantic_green"]


@pytest.mark.parametrize(
    "report",
    [
        "左侧少量胸腔积液。右肺清晰。",
        "Небольшой левосторонний плевральный выпот. Сердце в норме.",
        "انصباب جنبي أيسر صغير.",
    ],
)
def test_identical_reports_in_any_script_score_1(report):
    assert findings_first([report], [report]).per_sample[0]["semantic_green"] == 1.0


def test_a_chinese_report_without_one_sentence_misses_one_finding():
    row = findings_first(["左侧少量胸腔积液。右肺下叶肺炎。"], ["左侧少量胸腔积液。"]).per_sample[0]
    assert row["semantic_green_significant_errors"] == 1.0 and row["semantic_green_matched_findings"] == 1.0


def test_a_normal_report_against_a_normal_report_scores_1():
    row = findings_first(["No acute cardiopulmonary process."], ["Heart size is normal. The lungs are clear."])
    assert row.per_sample[0]["semantic_green"] == 1.0 and row.per_sample[0]["semantic_green_significant_errors"] == 0


@pytest.mark.parametrize(
    ("reference", "candidate", "category"),
    [
        ("Lt pleural effusion.", "Rt pleural effusion.", "c"),
        ("Increased right pleural effusion.", "Decreased right pleural effusion.", "e"),
        ("New left lower lobe consolidation.", "Improving left lower lobe consolidation.", "e"),
    ],
)
def test_abbreviations_and_reversed_changes_are_significant_errors(reference, candidate, category):
    result = findings_first([reference], [candidate])
    errors = result.details["semantic_green"][0]["errors"]
    assert result.per_sample[0]["semantic_green"] < 1.0
    assert [(e["category"], e["significant"]) for e in errors] == [(category, True)]


def test_abbreviations_read_as_words():
    from radmetrics.inference.text.sentences import expand_abbreviations

    assert expand_abbreviations("Lt. lower lobe. b/l opacities. PTX. ETT and NGT in place.") == (
        "left lower lobe. bilateral opacities. pneumothorax. endotracheal tube and nasogastric tube in place."
    )
    # judge=model's reading also names diagnoses written short; judge=rules' does not
    assert expand_abbreviations("CHF. Post-primary TB.", extended=True) == (
        "Congestive heart failure. Post-primary tuberculosis."
    )
    assert expand_abbreviations("CHF. Post-primary TB.") == "CHF. Post-primary TB."


def test_placeholders_are_no_finding_and_agreeing_change_words_are_no_error():
    """MIMIC's "___" is neither a statement nor another script; a candidate that keeps one of the reference's change
    words agrees on the change."""
    row = findings_first(["Heart normal. Lungs clear. ___."], ["Heart normal. Lungs clear."]).per_sample[0]
    assert row["semantic_green"] == 1.0 and row["semantic_green_significant_errors"] == 0
    result = findings_first(["Persistent but decreased left pleural effusion."], ["Decreased left pleural effusion."])
    assert not [e for e in result.details["semantic_green"][0]["errors"] if e["category"] == "e"]


def test_an_abbreviation_before_a_new_sentence_keeps_its_full_stop():
    from radmetrics.inference.text.sentences import expand_abbreviations, statements

    assert statements(expand_abbreviations("small effusion on the rt. no ptx.")) == [
        "small effusion on the right",
        "no pneumothorax",
    ]
