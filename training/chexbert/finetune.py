"""CheXbert-style labeler recipe (Smit et al. 2020): encoder [CLS] -> 13 four-class heads + 1 two-class
head (No Finding), summed cross-entropy (optionally class-weighted: loss.py), trained on the rule labeler's silver
labels; checkpoints are
selected by mean Cohen's kappa on the validation split (as CheXbert selects), and the card reports
kappa, CheXbert's weighted F1 and agreement with NegBio's manual labels next to the rule labeler's.

This is stage 1; chexbert/gold (stage 2) continues from its final/ on expert labels. Training reports whose
normalised text is a gold validation or test report (gold_split.py) are dropped here, and the NegBio agreement on
the card leaves those reports out too, so the reserved gold labels are first read by stage 2's final evaluation.

    radmetrics train chexbert/finetune --config configs/chexbert/finetune/tiny.yaml
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import partial

from transformers import TrainingArguments

from radmetrics.inference.loading.components import CHEXPERT_CONDITIONS

from ..common.arguments import DataArguments, ModelArguments
from ..common.encoders import build_tokenizer, build_wrapped_model, check_user_silver, load_silver, predict_logits
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish
from ..config import RecipeParser
from .gold_split import GoldSplitArguments, drop_reserved, reserved_texts
from .loss import IGNORED_HEAD, AllowedClassTrainer, ClassWeightArguments

COMPONENT = "chexbert"
RULE_TO_CLASS = {None: 0, 1: 1, 0: 2, -1: 3}  # rule labeler value -> head class (blank, positive, negative, uncertain)
CLASS_TO_RULE = {v: k for k, v in RULE_TO_CLASS.items()}


@dataclass
class SentenceExampleArguments:
    add_sentence_examples: bool = field(
        default=False,
        metadata={
            "help": (
                "also train on each distinct sentence of the training reports, labelled by the rule labeler on its own"
                " (No Finding, a whole-report label, is not trained on them)"
            )
        },
    )


ARGUMENT_TYPES = (
    ModelArguments,
    DataArguments,
    TrainingArguments,
    GoldSplitArguments,
    ClassWeightArguments,
    SentenceExampleArguments,
)


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `silver_dir` checked as the run reads it, before `radmetrics rehearse` launches anything
    (encoders.check_user_silver); None for bundled silver labels."""
    return check_user_silver(config, overrides, "chexpert")


def sentence_examples(texts) -> dict[str, list]:
    """Each distinct sentence (by normalised text) of `texts` with the rule labeler's labels of that sentence alone.

    The rule labeler classifies each mention within its sentence, so a sentence's labels are those its mentions give
    the report. Repeated boilerplate ("No pneumothorax.") counts once, so the rarer findings' sentences weigh more
    than in whole reports; with 1.9k IU training reports against CheXbert's 190k, stage 1 otherwise sees a rare
    finding's wording a few dozen times."""
    from radmetrics.data_builders.corpus.splits import normalise_report_text
    from radmetrics.data_builders.silver.rule_labeler import label_report
    from radmetrics.inference.text.sentences import split_sentences

    seen, sentences = set(), []
    for text in texts:
        for sentence in split_sentences(text):
            key = normalise_report_text(sentence)
            if key and key not in seen:
                seen.add(key)
                sentences.append(sentence)
    return {"text": sentences, "labels": [label_report(sentence) for sentence in sentences]}


def head_classes(labels: dict) -> list[int]:
    return [RULE_TO_CLASS[labels[name]] for name in CHEXPERT_CONDITIONS]


def labeler_scores(true, predicted) -> dict[str, float]:
    """Mean Cohen's kappa over the 14 heads; CheXbert's weighted F1: per condition the support-weighted
    F1 of its positive / negative / uncertain classes, averaged over conditions weighted by how many
    reports mention the condition; and macro F1: the same classes' plain mean F1 per condition, averaged over
    conditions as they are (a rare condition or class counts as much as a frequent one)."""
    import numpy as np
    from sklearn.metrics import cohen_kappa_score, f1_score

    true, predicted = np.asarray(true), np.asarray(predicted)
    kappas, f1s, weights, macro_f1s = [], [], [], []
    for i in range(true.shape[1]):
        same = (true[:, i] == predicted[:, i]).all()
        kappas.append(1.0 if same else float(np.nan_to_num(cohen_kappa_score(true[:, i], predicted[:, i]))))
        mentioned = [c for c in (1, 2, 3) if (true[:, i] == c).any()]
        if mentioned:
            f1s.append(f1_score(true[:, i], predicted[:, i], labels=mentioned, average="weighted", zero_division=0))
            weights.append(int((true[:, i] != 0).sum()))
            macro_f1s.append(f1_score(true[:, i], predicted[:, i], labels=mentioned, average="macro", zero_division=0))
    return {
        "kappa": float(np.mean(kappas)),
        "weighted_f1": float(np.average(f1s, weights=weights)) if weights else 0.0,
        "macro_f1": float(np.mean(macro_f1s)) if macro_f1s else 0.0,
    }


NO_FINDING = CHEXPERT_CONDITIONS.index("No Finding")


def tokenize_reports(batch, tokenizer, max_length: int, whole_reports: bool = True):
    """Texts with their head classes; a sentence (not `whole_reports`) ignores No Finding, a whole-report label."""
    encoded = tokenizer(batch["text"], truncation=True, max_length=max_length)
    encoded["labels"] = [head_classes(labels) for labels in batch["labels"]]
    if not whole_reports:  # No Finding is a whole-report label: not trained on a sentence
        for classes in encoded["labels"]:
            classes[NO_FINDING] = IGNORED_HEAD
    return encoded


def tokenized_splits(data, sentences, tokenize, training_args, data_args):
    """(every split tokenised, the training set: its reports, then the sentence examples when there are any)."""
    from datasets import concatenate_datasets

    with training_args.main_process_first(local=False, desc="tokenize"):
        tokenized = data.map(
            tokenize,
            batched=True,
            remove_columns=data["train"].column_names,
            num_proc=data_args.preprocessing_num_workers,
        )
        train_dataset = tokenized["train"]
        if sentences is not None:
            train_dataset = concatenate_datasets(
                [
                    train_dataset,
                    sentences.map(
                        tokenize,
                        batched=True,
                        fn_kwargs={"whole_reports": False},
                        remove_columns=sentences.column_names,
                    ),
                ]
            )
    return tokenized, train_dataset


def predict_classes(logits, classes_per_head):
    """reports x heads: each head's argmax class."""
    from radmetrics.inference.metrics.chexbert.labeler import argmax_per_head

    return argmax_per_head(logits, classes_per_head).numpy()


def labeler_metrics(eval_prediction, classes_per_head) -> dict[str, float]:
    """The Trainer's evaluation (kappa selects the checkpoint)."""
    return labeler_scores(eval_prediction.label_ids, predict_classes(eval_prediction.predictions, classes_per_head))


def majority_baseline(train_labels, gold) -> dict[str, float]:
    """labeler_scores of predicting every head's commonest training class for every report."""
    import numpy as np

    train_labels = np.asarray(train_labels)
    majority = np.array([np.bincount(train_labels[:, i]).argmax() for i in range(gold.shape[1])])
    return labeler_scores(gold, np.tile(majority, (len(gold), 1)))


def negbio_agreement(test, predicted, reserved) -> dict[str, float]:
    """Macro F1 against NegBio's manual labels on the test reports that are not reserved for stage 2, the model's
    beside the rule labeler's ({} when no test report has manual labels)."""
    from radmetrics.data_builders.agreement.labeler import f1_against_negbio
    from radmetrics.data_builders.corpus.splits import normalise_report_text

    test_ids = {
        rid for rid, text in zip(test["id"], test["text"]) if normalise_report_text(text) not in reserved
    }  # the reserved gold labels are stage 2's
    model_labels = {
        rid: dict(zip(CHEXPERT_CONDITIONS, (CLASS_TO_RULE[int(c)] for c in row)))
        for rid, row in zip(test["id"], predicted)
    }
    ours = f1_against_negbio(test_ids, predictions=model_labels)
    rule = f1_against_negbio(test_ids)
    if not ours["reports"]:
        return {}
    return {"negbio_test_macro_f1": ours["macro_f1"], "rule_labeler_negbio_test_macro_f1": rule["macro_f1"]}


def evaluate_final(final_dir, *, data, tokenized, tokenizer, reserved, classes_per_head, batch_size: int) -> dict:
    """Held-out results of final/: labeler scores on test beside the majority baseline, and NegBio agreement."""
    import numpy as np
    from transformers import DataCollatorWithPadding

    from radmetrics.inference.metrics.chexbert.labeler import CheXbertLabeler

    logits = predict_logits(
        CheXbertLabeler.from_pretrained(final_dir), tokenized["test"], DataCollatorWithPadding(tokenizer), batch_size
    )
    predicted = predict_classes(logits, classes_per_head)
    gold = np.asarray(tokenized["test"]["labels"])
    results = {f"test_{k}": v for k, v in labeler_scores(gold, predicted).items()}
    baseline = majority_baseline(tokenized["train"]["labels"], gold)
    results.update({f"baseline_majority_test_{k}": v for k, v in baseline.items()})
    results.update(negbio_agreement(data["test"], predicted, reserved))
    return results


def main(argv: list[str] | None = None):
    from datasets import Dataset
    from transformers import DataCollatorWithPadding

    from radmetrics.inference.metrics.chexbert.labeler import CheXbertLabeler

    model_args, data_args, training_args, split_args, weight_args, sentence_args = RecipeParser(
        ARGUMENT_TYPES
    ).parse_recipe_args(argv)
    data, provenance = load_silver(data_args, "chexpert", training_args.output_dir)
    reserved = reserved_texts(split_args)
    data["train"], dropped = drop_reserved(data["train"], reserved)
    sentences = (
        Dataset.from_dict(sentence_examples(data["train"]["text"])) if sentence_args.add_sentence_examples else None
    )
    provenance.update(
        train_examples=len(data["train"]),
        sentence_examples=len(sentences) if sentences else 0,
        gold_split={**split_args.describe(), "reserved_texts": len(reserved), "dropped_from_train": dropped},
    )
    tokenizer = build_tokenizer(model_args, (r["text"] for r in data["train"]), training_args)
    extra_args = (split_args, weight_args, sentence_args)
    run_dir = start_run(
        COMPONENT, "chexbert/finetune", model_args, data_args, training_args, provenance, extra_args=extra_args
    )
    tokenize = partial(tokenize_reports, tokenizer=tokenizer, max_length=data_args.max_seq_length)
    tokenized, train_dataset = tokenized_splits(data, sentences, tokenize, training_args, data_args)
    model = build_wrapped_model(CheXbertLabeler, model_args, tokenizer)
    classes_per_head = model.config.classes_per_head
    compute_metrics = partial(labeler_metrics, classes_per_head=classes_per_head)
    datasets, collator = (train_dataset, tokenized["validation"]), DataCollatorWithPadding(tokenizer)
    extra = dict(class_weight_power=weight_args.class_weight_power, labels_are_classes=True)
    trainer = recipe_trainer(
        AllowedClassTrainer, model, training_args, datasets, collator, compute_metrics, tokenizer, **extra
    )
    evaluate = partial(
        evaluate_final,
        data=data,
        tokenized=tokenized,
        tokenizer=tokenizer,
        reserved=reserved,
        classes_per_head=classes_per_head,
        batch_size=training_args.per_device_eval_batch_size,
    )
    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
