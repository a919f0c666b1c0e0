"""The finding-pair judge's recipe: a cross-encoder (a sequence-pair classifier) reading a reference finding and a
candidate finding and deciding what they are to each other, in the labels of inference/findings/judge_labels.py
(same; an attribute error, which attribute and whether significant; a contradiction; unrelated). semantic_green uses
an export of it with `--option semantic_green.judge=model --components EXPORT`.

    radmetrics data judge-pairs --out outputs/judge_pairs                      # or let the recipe build them
    radmetrics train judge/pairs --config configs/judge/pairs/small.yaml
    radmetrics export checkpoints/judge_pairs_small --out exports/finding_judge

Trained on the pairs `radmetrics data judge-pairs` builds from logged edits of the bundled IU X-ray corpus (or the
`pairs_dir` a user built from theirs); the checkpoint is selected by label macro F1 on the validation split. Held out:
the test split, per label (precision, recall, F1, support) and per decision, beside two trivial baselines: the
majority label, and the word rules semantic_green's `judge=rules` applies to a matched pair. Every test prediction is
written to test_predictions.jsonl.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from transformers import TrainingArguments

from radmetrics.inference.findings.judge_labels import JUDGE_LABELS

from ..common.arguments import ModelArguments
from ..common.encoders import build_tokenizer, encoder_config, predict_logits, pretrained_weights
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish
from ..config import RecipeParser
from .data import JudgeDataArguments, held_out_scores, judge_scores, load_pairs
from .feature_head import class_weights, train_feature_judge

COMPONENT = "finding_judge"
RECIPE = "judge/pairs"


ARCHITECTURES = ("cross_encoder", "pair_features")


@dataclass
class JudgeModelArguments:
    architecture: str = field(
        default="cross_encoder",
        metadata={
            "help": "cross_encoder (a sequence-pair classifier fine-tuned from model_name_or_path) or pair_features "
            "(a small network over the findings' attribute frames and their cosine under the frozen encoder "
            "model_name_or_path; feature_head.py)",
            "choices": ARCHITECTURES,
        },
    )
    class_weight_power: float = field(
        default=0.0, metadata={"help": "weigh each label's loss by (1 / its training frequency) ** power (0: none)"}
    )
    hidden_size: int = field(default=64, metadata={"help": "pair_features: units of the hidden layer"})
    eval_every: int = field(default=10, metadata={"help": "pair_features: epochs between validation checks"})


ARGUMENT_TYPES = (ModelArguments, JudgeDataArguments, TrainingArguments, JudgeModelArguments)


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `pairs_dir` read and checked as the run reads it (every split there, every label known), before
    `radmetrics rehearse` launches anything; None when the run builds the bundled corpus' pairs."""
    from ..config import data_arguments

    data_args = data_arguments(JudgeDataArguments, config, overrides)
    if not data_args.pairs_dir:
        return None
    try:
        load_pairs(data_args, output_dir="")
    except FileNotFoundError as exc:  # a missing split: the rehearsal prints it as one line
        raise ValueError(str(exc)) from None
    return data_args.pairs_dir


def build_model(model_args: ModelArguments, tokenizer):
    """A sequence-pair classifier over JUDGE_LABELS: a random tiny encoder, or the pretrained one with a new head."""
    from transformers import AutoModelForSequenceClassification

    labels = dict(
        num_labels=len(JUDGE_LABELS),
        id2label=dict(enumerate(JUDGE_LABELS)),
        label2id={label: i for i, label in enumerate(JUDGE_LABELS)},
    )
    weights = pretrained_weights(model_args)
    if weights is None:
        return AutoModelForSequenceClassification.from_config(encoder_config(model_args, tokenizer, **labels))
    return AutoModelForSequenceClassification.from_pretrained(weights, **labels, ignore_mismatched_sizes=True)


def weighted_trainer(power: float, train_labels: list[int]):
    """The Trainer class, with class-weighted cross-entropy when `power` > 0."""
    from transformers import Trainer

    if power <= 0:
        return Trainer, {}
    import numpy as np
    import torch

    weights = torch.tensor(class_weights(np.array(train_labels, dtype=np.int64), power))

    class WeightedTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weights.to(outputs.logits.device))
            return (loss, outputs) if return_outputs else loss

    return WeightedTrainer, {}


def tokenized(data: dict, tokenizer, max_length: int):
    from datasets import Dataset, DatasetDict

    label_ids = {label: i for i, label in enumerate(JUDGE_LABELS)}

    def encode(records):
        encoded = tokenizer(
            [r["reference"] for r in records],
            [r["candidate"] for r in records],
            truncation=True,
            max_length=max_length,
        )
        return {**encoded, "labels": [label_ids[r["label"]] for r in records]}

    return DatasetDict({split: Dataset.from_dict(encode(records)) for split, records in data.items()})


def held_out(final_dir, data: dict, dataset, tokenizer, training_args, run_dir) -> dict:
    """Test scores of final/ per label and decision, beside the majority label's and the word rules'."""
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding

    model = AutoModelForSequenceClassification.from_pretrained(final_dir)
    logits = predict_logits(
        model, dataset, DataCollatorWithPadding(tokenizer), training_args.per_device_eval_batch_size
    )
    return held_out_scores(data, [JUDGE_LABELS[int(k)] for k in logits.argmax(axis=1)], run_dir)


def main(argv: list[str] | None = None):
    from transformers import DataCollatorWithPadding

    model_args, data_args, training_args, judge_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    data, provenance = load_pairs(data_args, training_args.output_dir)
    if judge_args.architecture == "pair_features":
        return train_feature_judge(model_args, data_args, training_args, judge_args, data, provenance)
    texts = (t for r in data["train"] for t in (r["reference"], r["candidate"]))
    tokenizer = build_tokenizer(model_args, texts, training_args)
    run_dir = start_run(COMPONENT, RECIPE, model_args, data_args, training_args, provenance, extra_args=(judge_args,))
    dataset = tokenized(data, tokenizer, data_args.max_seq_length)
    model = build_model(model_args, tokenizer)

    def compute_metrics(prediction):
        predicted = [JUDGE_LABELS[int(k)] for k in prediction.predictions.argmax(axis=1)]
        gold = [JUDGE_LABELS[int(k)] for k in prediction.label_ids]
        return judge_scores(gold, predicted, "", per_label=False)

    trainer_class, extra = weighted_trainer(judge_args.class_weight_power, dataset["train"]["labels"])
    trainer = recipe_trainer(
        trainer_class,
        model,
        training_args,
        (dataset["train"], dataset["validation"]),
        DataCollatorWithPadding(tokenizer),
        compute_metrics,
        tokenizer,
        **extra,
    )

    def evaluate(final_dir) -> dict:
        return held_out(final_dir, data, dataset["test"], tokenizer, training_args, run_dir)

    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
