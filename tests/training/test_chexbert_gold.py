"""CheXbert-style labeler, stage 2 on NegBio's expert IU labels (training/chexbert/gold*.py) and its benchmark."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from radmetrics.data_builders.corpus.splits import normalise_report_text
from radmetrics.training.chexbert.gold_split import GoldSplitArguments, drop_reserved, gold_reports, reserved_texts

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "encoders" / "chexbert_gold.py"
TINY = "--max_seq_length 64 --per_device_train_batch_size 32 --logging_steps 1000 --save_steps 4".split()


def load_benchmark():
    spec = importlib.util.spec_from_file_location("chexbert_gold", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules["chexbert_gold"] = module
    sys.path.insert(0, str(BENCHMARK.parent))  # it imports a sibling script, as `python benchmarks/...` allows
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARK.parent))
    return module


def test_gold_split_is_by_report_deterministic_and_disjoint(iu_reports):
    from radmetrics.data_builders.agreement.labeler import read_negbio_gold

    args = GoldSplitArguments()
    by_split = gold_reports(args)
    assert by_split == gold_reports(GoldSplitArguments())
    ids = [{r.id for r in reports} for reports in by_split.values()]
    texts = [{normalise_report_text(r.text) for r in reports} for reports in by_split.values()]
    for a in range(3):
        for b in range(a + 1, 3):
            assert not ids[a] & ids[b] and not texts[a] & texts[b]  # identical reports share a split
    labelled = {r.id for r in iu_reports if r.text} & set(read_negbio_gold())
    assert set().union(*ids) == labelled and sum(map(len, ids)) == len(labelled)  # every labelled report, once
    sizes = [len(r) for r in by_split.values()]
    assert sizes[0] > sizes[2] > sizes[1] > 400
    assert gold_reports(GoldSplitArguments(gold_split_seed=2))["test"] != by_split["test"]


def test_reserved_gold_reports_are_dropped_whatever_their_punctuation():
    from datasets import Dataset

    args = GoldSplitArguments()
    test_report = gold_reports(args)["test"][0]
    train_report = gold_reports(args)["train"][0]
    variant = test_report.text.upper().replace(".", " .  ")
    data = Dataset.from_dict({"text": [train_report.text, test_report.text, variant]})
    kept, dropped = drop_reserved(data, reserved_texts(args))
    assert dropped == 2 and kept["text"] == [train_report.text]


def test_allowed_classes_follow_gold_then_silver():
    import torch

    from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS
    from radmetrics.training.chexbert.gold import allowed_classes
    from radmetrics.training.chexbert.loss import allowed_class_loss

    classes = [2 if c == "No Finding" else 4 for c in CHEXPERT_CONDITIONS]
    silver = {c: None for c in CHEXPERT_CONDITIONS} | {"Edema": 1, "Atelectasis": -1, "Fracture": 0, "No Finding": 1}
    gold = {"Edema": False, "Atelectasis": True, "Cardiomegaly": False, "No Finding": False}
    mask = np.array(allowed_classes(gold, silver, classes))
    heads = dict(zip(CHEXPERT_CONDITIONS, np.split(mask, np.cumsum(classes)[:-1])))
    assert list(heads["Edema"]) == [1, 0, 1, 1]  # gold says no, silver said positive: any class but positive
    assert list(heads["Atelectasis"]) == [0, 1, 0, 0]  # gold positive
    assert list(heads["Cardiomegaly"]) == [1, 0, 0, 0]  # gold no, silver blank: blank
    assert list(heads["Fracture"]) == [0, 0, 1, 0]  # not a NegBio label: silver
    assert list(heads["No Finding"]) == [1, 0]
    logits = torch.randn(2, sum(classes))
    one_hot = torch.tensor([allowed_classes({}, silver, classes)] * 2)
    targets = torch.tensor([[1 if v == 1 else 0 if v is None else 2 if v == 0 else 3 for v in silver.values()]] * 2)
    cross_entropy = sum(
        torch.nn.functional.cross_entropy(part, targets[:, i])
        for i, part in enumerate(torch.split(logits, classes, -1))
    )
    assert allowed_class_loss(logits, one_hot, classes).item() == pytest.approx(cross_entropy.item(), rel=1e-5)


def test_class_weights_balance_each_head_and_weight_the_loss_as_cross_entropy_does():
    import torch

    from radmetrics.training.chexbert.loss import allowed_class_loss, class_weights, one_hot_heads

    classes = [4, 2]
    labels = torch.tensor([[0, 0], [0, 1], [0, 1], [1, 1]])
    allowed = one_hot_heads(labels, classes)
    weights = class_weights(allowed, classes, power=1.0)
    # head 1: 4 reports, 2 classes seen (3 x class 0, 1 x class 1): 4/(2*3), 4/(2*1); unseen classes keep 1
    np.testing.assert_allclose(weights, [2 / 3, 2, 1, 1, 2, 2 / 3])
    np.testing.assert_allclose(class_weights(allowed, classes, power=0.5), np.sqrt(weights))
    assert (class_weights(allowed, classes, power=0.0) == 1).all()
    logits = torch.randn(4, 6)
    w = torch.as_tensor(weights, dtype=torch.float32)
    cross_entropy = sum(
        torch.nn.functional.cross_entropy(part, labels[:, i], weight=w_part)
        for i, (part, w_part) in enumerate(zip(torch.split(logits, classes, -1), torch.split(w, classes)))
    )
    assert allowed_class_loss(logits, allowed, classes, w).item() == pytest.approx(cross_entropy.item(), rel=1e-5)
    two_allowed = allowed.clone()
    two_allowed[0, 1] = 1  # report 0 allows classes 0 and 1 on head 1: its weight is their mean, (2/3 + 2) / 2
    nll = torch.logsumexp(logits[:, :4], -1) - torch.logsumexp(
        logits[:, :4].masked_fill(two_allowed[:, :4] == 0, -torch.inf), -1
    )
    example = torch.tensor([4 / 3, 2 / 3, 2 / 3, 2])
    head_two = torch.nn.functional.cross_entropy(logits[:, 4:], labels[:, 1], weight=w[4:])
    expected = (example * nll).sum() / example.sum() + head_two
    assert allowed_class_loss(logits, two_allowed, classes, w).item() == pytest.approx(expected.item(), rel=1e-5)


def test_sentence_examples_are_distinct_sentences_labelled_alone_and_train_no_no_finding_head():
    import torch

    from radmetrics.data_builders.silver.rule_labeler import label_report
    from radmetrics.training.chexbert.finetune import sentence_examples
    from radmetrics.training.chexbert.loss import IGNORED_HEAD, allowed_class_loss, class_weights, one_hot_heads

    examples = sentence_examples(
        ["No pneumothorax. Small left pleural effusion.", "NO PNEUMOTHORAX!  Heart is normal."]
    )
    assert examples["text"] == ["No pneumothorax.", "Small left pleural effusion.", "Heart is normal."]
    assert examples["labels"][1] == label_report("Small left pleural effusion.")
    assert examples["labels"][1]["Pleural Effusion"] == 1 and examples["labels"][0]["Pneumothorax"] == 0
    classes = [4, 2]
    labels = torch.tensor([[1, IGNORED_HEAD], [0, 1], [0, 0]])
    allowed = one_hot_heads(labels, classes)
    assert allowed[0].tolist() == [0, 1, 0, 0, 1, 1]
    np.testing.assert_allclose(class_weights(allowed, classes, 1.0)[4:], [1, 1])  # counted over the two rows it trains
    logits = torch.randn(3, 6, requires_grad=True)
    loss = allowed_class_loss(logits, allowed, classes)
    loss.backward()
    assert logits.grad[0, 4:].abs().max() == 0 and logits.grad[1, 4:].abs().max() > 0
    first_head = torch.nn.functional.cross_entropy(logits[:, :4], labels[:, 0])
    second_head = torch.nn.functional.cross_entropy(logits[1:, 4:], labels[1:, 1])  # the mean over the rows it trains
    assert loss.item() == pytest.approx((first_head + second_head).item(), rel=1e-5)


def test_comparison_matches_labeler_eval_and_brackets_its_estimates():
    from radmetrics.data_builders.agreement.labeler import f1_against_negbio
    from radmetrics.training.chexbert.gold import rule_positives, shared_labels
    from radmetrics.training.chexbert.gold_eval import compare_labelers

    reports = gold_reports(GoldSplitArguments())["validation"]
    labels = shared_labels()
    gold = np.array([[r.positive[label] for label in labels] for r in reports])
    rule = rule_positives(reports, labels)
    reference = f1_against_negbio({r.id for r in reports})
    flipped = rule.copy()
    flipped[:40] = ~flipped[:40]
    result = compare_labelers(gold, flipped, rule, labels, n_bootstrap=200, n_permutations=200)
    assert result["rule_macro_f1"] == pytest.approx(reference["macro_f1"])
    assert result["rule_per_label"]["Cardiomegaly"]["f1"] == pytest.approx(
        reference["per_label"]["Cardiomegaly"]["f1"]
    )
    assert result["diff"] == pytest.approx(result["model_macro_f1"] - result["rule_macro_f1"]) and result["diff"] < 0
    for key in ("model_macro_f1", "rule_macro_f1", "diff"):
        low, high = result[f"{key}_ci95" if key != "diff" else "diff_ci95"]
        assert low <= result[key] <= high


def test_both_stages_run_hold_out_gold_test_and_fill_the_benchmark_record(tmp_path):
    from radmetrics.training.chexbert import gold
    from radmetrics.training.common.run_dir import read_eval_results, read_run_manifest

    out = tmp_path / "result.json"
    stage1_args = " ".join(
        [
            *TINY,
            *(
                "--max_steps 4 --max_eval_samples 64 --eval_strategy no --load_best_model_at_end false "
                "--add_sentence_examples true --class_weight_power 0.5"
            ).split(),
        ]
    )
    stage2_args = " ".join(
        [
            *TINY,
            *(
                "--max_steps 8 --eval_steps 4 --n_bootstrap 50 --n_permutations 50 --class_weight_power "
                "0.5 --add_sentence_examples true"
            ).split(),
        ]
    )
    benchmark = load_benchmark()
    result = benchmark.main(
        [
            "--scale",
            "tiny",
            "--workdir",
            str(tmp_path / "runs"),
            "--out",
            str(out),
            "--stage1-args",
            stage1_args,
            "--stage2-args",
            stage2_args,
        ]
    )
    args = GoldSplitArguments()
    stage1 = read_run_manifest(tmp_path / "runs" / "stage1")["data_provenance"]
    assert stage1["sentence_examples"] > stage1["train_examples"]  # each distinct sentence of the kept reports
    reserved = reserved_texts(args)
    assert stage1["gold_split"] == {
        **args.describe(),
        "reserved_texts": len(reserved),
        "dropped_from_train": stage1["gold_split"]["dropped_from_train"],
    }
    from datasets import load_from_disk

    silver_train = load_from_disk(str(tmp_path / "runs" / "stage1" / "silver" / "chexpert" / "hf"))["train"]
    kept = [t for t in silver_train["text"] if normalise_report_text(t) not in reserved]
    assert stage1["gold_split"]["dropped_from_train"] == len(silver_train) - len(kept) > 0
    assert stage1["train_examples"] == len(kept)

    stage2 = read_run_manifest(tmp_path / "runs" / "stage2")["data_provenance"]
    assert stage2["sentence_examples"] > stage2["gold_train_reports"]  # the gold training reports' distinct sentences
    results = read_eval_results(tmp_path / "runs" / "stage2")
    assert {
        "validation_macro_f1",
        "rule_labeler_validation_macro_f1",
        "test_macro_f1",
        "rule_labeler_test_macro_f1",
        "test_macro_f1_diff_ci95_low",
        "test_f1_No Finding",
    } <= set(results)
    predictions = [json.loads(line) for line in (tmp_path / "runs" / "stage2" / "gold_predictions.jsonl").open()]
    test_ids = {r.id for r in gold_reports(args)["test"]}
    assert {p["id"] for p in predictions if p["split"] == "test"} == test_ids
    assert not {normalise_report_text(r.text) for r in gold_reports(args)["test"]} & {
        normalise_report_text(t) for t in kept
    }

    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert {
        "model_macro_f1",
        "rule_macro_f1",
        "diff_ci95",
        "model_macro_f1_ci95",
        "rule_macro_f1_ci95",
        "per_label",
        "machine",
        "command",
        "seconds",
        "split_sizes",
    } <= set(result)
    assert result["split_sizes"]["gold_test"] == len(test_ids)
    assert set(result["per_label"]["Edema"]["rule"]) >= {"precision", "recall", "f1", "support"}

    stage1_weights = tmp_path / "runs" / "stage1" / "final" / "model.safetensors"
    trained_at = stage1_weights.stat().st_mtime_ns
    again = benchmark.main(
        [
            "--scale",
            "tiny",
            "--workdir",
            str(tmp_path / "again"),
            "--out",
            str(tmp_path / "again.json"),
            "--stage1-dir",
            str(tmp_path / "runs" / "stage1"),
            "--stage1-args",
            stage1_args,
            "--stage2-args",
            stage2_args,
        ]
    )
    assert again["model_macro_f1"] == result["model_macro_f1"]  # stage 1 reused as trained; stage 2 reruns alike
    assert stage1_weights.stat().st_mtime_ns == trained_at  # reused, not retrained
    with pytest.raises(ValueError, match="other settings"):
        benchmark.main(
            [
                "--scale",
                "tiny",
                "--workdir",
                str(tmp_path / "other_settings"),
                "--out",
                str(tmp_path / "x.json"),
                "--stage1-dir",
                str(tmp_path / "runs" / "stage1"),
                "--stage1-args",
                stage1_args.replace("--class_weight_power 0.5", "--class_weight_power 1.0"),
                "--stage2-args",
                stage2_args,
            ]
        )
    assert read_run_manifest(tmp_path / "runs" / "stage1")["training_config"]["class_weight_power"] == 0.5  # kept
    (tmp_path / "unfinished").mkdir()
    (tmp_path / "unfinished" / "radmetrics_run.json").write_text("{}")
    with pytest.raises(FileExistsError, match="unfinished stage 1"):
        benchmark.train_both_stages("tiny", tmp_path / "x", [], [], tmp_path / "unfinished")

    with pytest.raises(ValueError, match="same --gold_split_ratios"):
        gold.main(
            [
                "--model_name_or_path",
                str(tmp_path / "runs" / "stage1" / "final"),
                "--output_dir",
                str(tmp_path / "other"),
                "--gold_split_seed",
                "5",
                "--report_to",
                "none",
            ]
        )
