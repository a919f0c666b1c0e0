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


def main(argv: list[str] | None = None):
    import numpy as np
    from datasets import Dataset, concatenate_datasets
    from transformers import DataCollatorWithPadding

    from radmetrics.data_builders.agreement.labeler import f1_against_negbio
    from radmetrics.data_builders.corpus.splits import normalise_report_text
    from radmetrics.inference.metrics.chexbert.labeler import CheXbertLabeler, argmax_per_head

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
    run_dir = start_run(
        COMPONENT,
        "chexbert/finetune",
        model_args,
        data_args,
        training_args,
        provenance,
        extra_args=(split_args, weight_args, sentence_args),
    )

    no_finding = CHEXPERT_CONDITIONS.index("No Finding")

    def tokenize(batch, whole_reports: bool = True):
        encoded = tokenizer(batch["text"], truncation=True, max_length=data_args.max_seq_length)
        encoded["labels"] = [head_classes(labels) for labels in batch["labels"]]
        if not whole_reports:  # No Finding is a whole-report label: not trained on a sentence
            for classes in encoded["labels"]:
                classes[no_finding] = IGNORED_HEAD
        return encoded

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

    model = build_wrapped_model(CheXbertLabeler, model_args, tokenizer)
    config = model.config

    def predict_classes(logits) -> np.ndarray:
        return argmax_per_head(logits, config.classes_per_head).numpy()

    def compute_metrics(eval_prediction):
        return labeler_scores(eval_prediction.label_ids, predict_classes(eval_prediction.predictions))

    datasets, collator = (train_dataset, tokenized["validation"]), DataCollatorWithPadding(tokenizer)
    extra = dict(class_weight_power=weight_args.class_weight_power, labels_are_classes=True)
    trainer = recipe_trainer(
        AllowedClassTrainer, model, training_args, datasets, collator, compute_metrics, tokenizer, **extra
    )

    def evaluate(final_dir) -> dict:
        logits = predict_logits(
            CheXbertLabeler.from_pretrained(final_dir),
            tokenized["test"],
            DataCollatorWithPadding(tokenizer),
            training_args.per_device_eval_batch_size,
        )
        predicted = predict_classes(logits)
        gold = np.asarray(tokenized["test"]["labels"])
        results = {f"test_{k}": v for k, v in labeler_scores(gold, predicted).items()}
        majority = np.array(
            [np.bincount(np.asarray(tokenized["train"]["labels"])[:, i]).argmax() for i in range(gold.shape[1])]
        )
        baseline = labeler_scores(gold, np.tile(majority, (len(gold), 1)))
        results.update({f"baseline_majority_test_{k}": v for k, v in baseline.items()})
        test_ids = {
            rid
            for rid, text in zip(data["test"]["id"], data["test"]["text"])
            if normalise_report_text(text) not in reserved
        }  # the reserved gold labels are stage 2's
        model_labels = {
            rid: dict(zip(CHEXPERT_CONDITIONS, (CLASS_TO_RULE[int(c)] for c in row)))
            for rid, row in zip(data["test"]["id"], predicted)
        }
        ours = f1_against_negbio(test_ids, predictions=model_labels)
        rule = f1_against_negbio(test_ids)
        if ours["reports"]:
            results["negbio_test_macro_f1"] = ours["macro_f1"]
            results["rule_labeler_negbio_test_macro_f1"] = rule["macro_f1"]
        return results

    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
