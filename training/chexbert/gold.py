"""Stage 2 of the CheXbert-style labeler, as CheXbert trains it (Smit et al. 2020): continue from the stage-1 labeler
(chexbert/finetune, trained on the rule labeler's silver labels) on expert labels, here NegBio's manual IU X-ray
labels split by report into gold train / validation / test (gold_split.py).

    radmetrics train chexbert/finetune --config configs/chexbert/finetune/small.yaml
    radmetrics train chexbert/gold --config configs/chexbert/gold/small.yaml

`model_name_or_path` is the stage-1 run's final/ (or its export), and must record that stage 1 held this gold split's
validation and test reports out; an encoder (or tiny-bert) instead starts a labeler with new heads on gold labels only.

Targets. NegBio says only whether each of the 8 shared findings is present; it does not tell negative, uncertain and
unmentioned apart. Each head is trained on the set of classes its labels allow, with loss -log P(allowed classes): a
gold positive allows `positive` only; a gold non-positive allows the silver class where the rule labeler did not say
positive, else every class but `positive`; the 6 heads NegBio lacks keep their silver class, so stage 2 does not
erase what stage 1 learnt there and the export stays a full 14-head labeler. With `add_sentence_examples` the gold
training reports' distinct sentences join them, each allowing only its silver class (as in stage 1), so the rare
findings' wording keeps a teacher signal while the reports learn the expert labels.

Selection and test. Checkpoints are selected by macro F1 on gold validation (`metric_for_best_model: macro_f1`); gold
test is predicted once, by the final model, and scored with the rule labeler on the same reports (gold_eval.py):
eval_results.json, gold_evaluation.json (per-label scores, intervals) and gold_predictions.jsonl.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from transformers import TrainingArguments

from radmetrics.inference.files.atomic import write_text
from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

from ..common.arguments import ModelArguments
from ..common.encoders import build_tokenizer, build_wrapped_model, predict_logits
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish
from ..config import RecipeParser
from .finetune import RULE_TO_CLASS, SentenceExampleArguments, sentence_examples
from .gold_eval import compare_labelers, macro_f1
from .gold_split import GOLD_SOURCE, GoldReport, GoldSplitArguments, gold_reports
from .loss import AllowedClassTrainer, ClassWeightArguments

COMPONENT = "chexbert"
POSITIVE = RULE_TO_CLASS[1]


@dataclass
class GoldStageArguments:
    max_seq_length: int = field(default=128, metadata={"help": "tokens per report after tokenisation"})
    n_bootstrap: int = field(
        default=1000, metadata={"help": "bootstrap resamples of the test reports for the intervals"}
    )
    n_permutations: int = field(
        default=10000,
        metadata={
            "help": (
                "approximate-randomisation permutations for the test p-value of the difference with the rule labeler"
            )
        },
    )
    score_gold_test: bool = field(
        default=True,
        metadata={
            "help": "predict and score gold test at the end; turn off while choosing settings on gold validation"
        },
    )


ARGUMENT_TYPES = (
    ModelArguments,
    GoldStageArguments,
    TrainingArguments,
    GoldSplitArguments,
    ClassWeightArguments,
    SentenceExampleArguments,
)


def allowed_classes(positive: dict[str, bool], silver: dict, classes_per_head: list[int]) -> list[int]:
    """The 0/1 mask (concatenated over heads) of the classes a report's labels allow (module docstring)."""
    mask = []
    for name, n_classes in zip(CHEXPERT_CONDITIONS, classes_per_head):
        silver_class = RULE_TO_CLASS[silver[name]]
        if name not in positive or (not positive[name] and silver_class != POSITIVE):
            allowed = {silver_class}
        elif positive[name]:
            allowed = {POSITIVE}
        else:
            allowed = set(range(n_classes)) - {POSITIVE}
        mask += [int(c in allowed) for c in range(n_classes)]
    return mask


def shared_labels() -> list[str]:
    from radmetrics.data_builders.agreement.labeler import SHARED_LABELS

    return list(SHARED_LABELS.values())


def head_offsets(classes_per_head: list[int]) -> dict[str, int]:
    """Observation -> index of its head's first logit in the concatenated logits."""
    offsets, start = {}, 0
    for name, n_classes in zip(CHEXPERT_CONDITIONS, classes_per_head):
        offsets[name] = start
        start += n_classes
    return offsets


def positives_from_logits(logits, classes_per_head: list[int], labels: list[str]):
    """reports x labels: the head's argmax is `positive`."""
    import numpy as np

    from radmetrics.inference.metrics.chexbert.labeler import argmax_per_head

    classes = argmax_per_head(logits, classes_per_head).numpy()
    columns = [CHEXPERT_CONDITIONS.index(label) for label in labels]
    return np.asarray(classes[:, columns] == POSITIVE)


def gold_positives_from_masks(allowed, classes_per_head: list[int], labels: list[str]):
    """reports x labels, read back from allowed-class masks: on a shared head `positive` is allowed exactly when gold
    says positive (allowed_classes)."""
    import numpy as np

    offsets = head_offsets(classes_per_head)
    allowed = np.asarray(allowed)
    return np.stack([allowed[:, offsets[label] + POSITIVE] == 1 for label in labels], axis=1)


def rule_positives(reports: list[GoldReport], labels: list[str]):
    import numpy as np

    from radmetrics.data_builders.silver.rule_labeler import label_report

    rows = [label_report(r.text) for r in reports]
    return np.array([[row[label] == 1 for label in labels] for row in rows], dtype=bool).reshape(-1, len(labels))


def stage_one_provenance(path: Path) -> dict | None:
    """data_provenance of the run (or export) that wrote the labeler at `path`."""
    from ..common.run_dir import RUN_MANIFEST

    for manifest in (path / "radmetrics.json", path / RUN_MANIFEST, path.parent / RUN_MANIFEST):
        if manifest.is_file():
            return json.loads(manifest.read_text(encoding="utf-8")).get("data_provenance", {})
    return None


def check_stage_one(path: Path, split_args: GoldSplitArguments) -> None:
    """Refuse a stage-1 labeler that is not recorded as trained without this gold split's validation and test
    reports."""
    recorded = (stage_one_provenance(path) or {}).get("gold_split")
    if recorded is None:
        raise ValueError(
            f"{path}: no record that stage 1 left the gold validation and test reports out of its training "
            "data (data_provenance.gold_split in its run manifest); train it with chexbert/finetune"
        )
    if {k: recorded.get(k) for k in ("ratios", "seed")} != split_args.describe():
        raise ValueError(
            f"{path}: stage 1 held out the gold split {recorded}, this run uses {split_args.describe()}; "
            "train stage 1 with the same --gold_split_ratios and --gold_split_seed"
        )


def is_labeler(path: Path) -> bool:
    config = path / "config.json"
    return (
        config.is_file() and json.loads(config.read_text(encoding="utf-8")).get("model_type") == "radmetrics_chexbert"
    )


def labeler_and_tokenizer(model_args, split_args, training_args, train_reports: list[GoldReport]):
    """(the stage-1 labeler's path, whether the run continues it, the tokenizer): stage 1's own tokenizer after
    check_stage_one, else a tokenizer for a labeler with new heads."""
    from radmetrics.inference.loading.hub import load_tokenizer

    stage_one = Path(model_args.model_name_or_path).expanduser()
    continues = is_labeler(stage_one)
    if continues:
        check_stage_one(stage_one, split_args)
        return stage_one, True, load_tokenizer(stage_one)
    return stage_one, False, build_tokenizer(model_args, (r.text for r in train_reports), training_args)


def encode_reports(reports: list[GoldReport], tokenizer, classes_per_head: list[int], max_length: int):
    """Gold reports with the allowed-class masks of their gold and silver labels (allowed_classes)."""
    from datasets import Dataset

    from radmetrics.data_builders.silver.rule_labeler import label_report

    encoded = tokenizer([r.text for r in reports], truncation=True, max_length=max_length)
    return Dataset.from_dict(
        {**encoded, "labels": [allowed_classes(r.positive, label_report(r.text), classes_per_head) for r in reports]}
    )


def encode_sentences(sentences: dict, tokenizer, classes_per_head: list[int], max_length: int):
    """Gold-train sentences allowing their silver class on each head; No Finding, a whole-report label, allows all."""
    from datasets import Dataset

    start, n = (
        head_offsets(classes_per_head)["No Finding"],
        classes_per_head[CHEXPERT_CONDITIONS.index("No Finding")],
    )
    masks = [allowed_classes({}, labels, classes_per_head) for labels in sentences["labels"]]
    for mask in masks:
        mask[start : start + n] = [1] * n
    encoded = tokenizer(sentences["text"], truncation=True, max_length=max_length)
    return Dataset.from_dict({**encoded, "labels": masks})


def gold_metrics(eval_prediction, classes_per_head: list[int], labels: list[str]) -> dict[str, float]:
    """The Trainer's evaluation: macro F1 of the shared labels' positives on gold validation (selects checkpoints)."""
    gold = gold_positives_from_masks(eval_prediction.label_ids, classes_per_head, labels)
    return {"macro_f1": macro_f1(gold, positives_from_logits(eval_prediction.predictions, classes_per_head, labels))}


def prediction_rows(reports: list[GoldReport], split: str, gold, ours, rule, labels: list[str]) -> list[dict]:
    """gold_predictions.jsonl's lines: each report's gold, model and rule positives."""
    return [
        {
            "id": r.id,
            "split": split,
            **{
                f"{who}_{label}": bool(row[j])
                for who, row in (("gold", g), ("model", m), ("rule", u))
                for j, label in enumerate(labels)
            },
        }
        for r, g, m, u in zip(reports, gold, ours, rule)
    ]


def evaluate_final(
    final_dir, *, run_dir, by_split, encoded, tokenizer, classes_per_head, labels, stage_args, training_args
) -> dict:
    """Gold validation, and gold test once unless `score_gold_test` is off: the final labeler against the rule
    labeler (compare_labelers); writes gold_evaluation.json and gold_predictions.jsonl, returns flat_results."""
    import numpy as np
    from transformers import DataCollatorWithPadding

    from radmetrics.inference.metrics.chexbert.labeler import CheXbertLabeler

    final_model = CheXbertLabeler.from_pretrained(final_dir)
    evaluation, predictions = {}, []
    for split in ("validation", "test") if stage_args.score_gold_test else ("validation",):  # the one reading of test
        reports = by_split[split]
        dataset = (
            encoded[split]
            if split in encoded
            else encode_reports(reports, tokenizer, classes_per_head, stage_args.max_seq_length)
        )
        collator = DataCollatorWithPadding(tokenizer)
        logits = predict_logits(final_model, dataset, collator, training_args.per_device_eval_batch_size)
        gold = np.array([[r.positive[label] for label in labels] for r in reports], dtype=bool).reshape(
            -1, len(labels)
        )
        ours, rule = positives_from_logits(logits, classes_per_head, labels), rule_positives(reports, labels)
        evaluation[split] = compare_labelers(
            gold, ours, rule, labels, stage_args.n_bootstrap, stage_args.n_permutations, seed=training_args.seed
        )
        predictions += prediction_rows(reports, split, gold, ours, rule, labels)
    write_text(run_dir / "gold_evaluation.json", json.dumps(evaluation, indent=2))
    write_text(run_dir / "gold_predictions.jsonl", "".join(json.dumps(p) + "\n" for p in predictions))
    return flat_results(evaluation, by_split)


def main(argv: list[str] | None = None):
    from datasets import DatasetDict, concatenate_datasets
    from transformers import DataCollatorWithPadding

    from radmetrics.inference.metrics.chexbert.labeler import CheXbertLabeler

    model_args, stage_args, training_args, split_args, weight_args, sentence_args = RecipeParser(
        ARGUMENT_TYPES
    ).parse_recipe_args(argv)
    by_split = gold_reports(split_args)
    sentences = sentence_examples(r.text for r in by_split["train"]) if sentence_args.add_sentence_examples else None
    stage_one, continues, tokenizer = labeler_and_tokenizer(model_args, split_args, training_args, by_split["train"])
    provenance = {
        "gold": GOLD_SOURCE,
        "gold_split": split_args.describe(),
        "stage_one": str(stage_one) if continues else None,
        **{f"gold_{split}_reports": len(reports) for split, reports in by_split.items()},
        "sentence_examples": len(sentences["text"]) if sentences else 0,
    }
    extra_args = (split_args, weight_args, sentence_args)
    run_dir = start_run(
        COMPONENT, "chexbert/gold", model_args, stage_args, training_args, provenance, extra_args=extra_args
    )
    model = (
        CheXbertLabeler.from_pretrained(stage_one)
        if continues
        else build_wrapped_model(CheXbertLabeler, model_args, tokenizer)
    )
    classes_per_head, labels = list(model.config.classes_per_head), shared_labels()
    encode = partial(
        encode_reports, tokenizer=tokenizer, classes_per_head=classes_per_head, max_length=stage_args.max_seq_length
    )
    encoded = DatasetDict({split: encode(by_split[split]) for split in ("train", "validation")})
    train_dataset = (
        concatenate_datasets(
            [encoded["train"], encode_sentences(sentences, tokenizer, classes_per_head, stage_args.max_seq_length)]
        )
        if sentences
        else encoded["train"]
    )
    datasets, collator = (train_dataset, encoded["validation"]), DataCollatorWithPadding(tokenizer)
    compute_metrics = partial(gold_metrics, classes_per_head=classes_per_head, labels=labels)
    extra = dict(class_weight_power=weight_args.class_weight_power)
    trainer = recipe_trainer(
        AllowedClassTrainer, model, training_args, datasets, collator, compute_metrics, tokenizer, **extra
    )
    evaluate = partial(
        evaluate_final,
        run_dir=run_dir,
        by_split=by_split,
        encoded=encoded,
        tokenizer=tokenizer,
        classes_per_head=classes_per_head,
        labels=labels,
        stage_args=stage_args,
        training_args=training_args,
    )
    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=stage_args.max_seq_length)
    return run_dir


def flat_results(evaluation: dict, by_split: dict) -> dict:
    """eval_results.json (and the model card): headline figures per gold split, per-label test F1."""
    results = {f"gold_{split}_reports": len(reports) for split, reports in by_split.items()}
    for split, scores in evaluation.items():
        results.update(
            {f"{split}_macro_f1": scores["model_macro_f1"], f"rule_labeler_{split}_macro_f1": scores["rule_macro_f1"]}
        )
    test = evaluation.get("test")
    if test is None:
        return results
    results.update(
        {
            "test_macro_f1_diff": test["diff"],
            "test_macro_f1_diff_ci95_low": test["diff_ci95"][0],
            "test_macro_f1_diff_ci95_high": test["diff_ci95"][1],
            "test_macro_f1_diff_p_value": test["diff_p_value"],
        }
    )
    for label in test["labels"]:
        results[f"test_f1_{label}"] = test["model_per_label"][label]["f1"]
        results[f"rule_labeler_test_f1_{label}"] = test["rule_per_label"][label]["f1"]
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
