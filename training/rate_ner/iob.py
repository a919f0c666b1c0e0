"""RaTE-NER IOB recipe: token classification over the 5 RaTEScore entity types (seed 001 A.9:
DeBERTa-v3, lr 1e-5), in the style of transformers' run_ner.py, scored like the span recipes: entities read from the
tags as seqeval reads them, then span/scores.py (micro and macro F1, per-type rows, types never predicted).

`label_all_subwords=False` labels the first subword of each word (run_ner's default) and ignores the
rest in the loss; `True` labels every subword (a continuation of B-X becomes I-X), matching RaTEScore's
reference decoder, which reads a tag on every subword.

Held-out scores are word-level, as RaTEScore's tagger reads the model (each word takes its first subword's tag,
under either convention). The baseline is the span recipe's word-majority spans (each word takes its commonest type,
runs of one type make an entity): a baseline that voted on B-/I- tags per word split entities apart and scored 0.69
where this one scores 0.78 on the same test split. The test predictions (tags and spans) and the baseline's go to
RUN_DIR/test_predictions.jsonl.

    radmetrics train rate_ner/iob --config configs/rate_ner/iob/tiny.yaml
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import partial

from transformers import TrainingArguments

from radmetrics.inference.loading.components import get_component, iob_labels

from ..common.arguments import DataArguments, ModelArguments
from ..common.encoders import (
    build_tokenizer,
    check_user_silver,
    encoder_config,
    load_silver,
    map_on_main_first,
    predict_logits,
    pretrained_weights,
)
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish, write_test_predictions
from ..config import RecipeParser
from ..span.scores import iob_spans, span_scores
from ..span.trainer import word_majority_spans

COMPONENT = "rate_ner_iob"


@dataclass
class IobArguments:
    label_all_subwords: bool = field(
        default=False, metadata={"help": "label every subword (RaTEScore decoder) or only the first"}
    )


ARGUMENT_TYPES = (ModelArguments, DataArguments, TrainingArguments, IobArguments)


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `silver_dir` checked as the run reads it, before `radmetrics rehearse` launches anything
    (encoders.check_user_silver); None for bundled silver labels."""
    return check_user_silver(config, overrides, "rate_ner")


def align_labels(
    word_ids: list[int | None], word_tags: list[str], label2id: dict[str, int], all_subwords: bool
) -> list[int]:
    labels, previous = [], None
    for word in word_ids:
        if word is None:
            labels.append(-100)
        elif word != previous:
            labels.append(label2id[word_tags[word]])
        elif all_subwords:
            tag = word_tags[word]
            labels.append(label2id["I-" + tag[2:] if tag.startswith("B-") else tag])
        else:
            labels.append(-100)
        previous = word
    return labels


def entity_types(labels: list[str]) -> list[str]:
    """The entity types of an IOB label list, in order."""
    return list(dict.fromkeys(label[2:] for label in labels if label != "O"))


def first_subword_tags(word_ids: list[int | None], predicted: list[int], n_words: int, labels: list[str]) -> list[str]:
    """Word-level tags from subword predictions: each word takes its first subword's tag; a word cut off by
    truncation gets O (the model never saw it)."""
    tags = ["O"] * n_words
    seen: set[int] = set()
    for position, word in enumerate(word_ids):
        if word is not None and word not in seen:
            seen.add(word)
            tags[word] = labels[predicted[position]]
    return tags


def tokenize_and_align(batch, tokenizer, label2id: dict[str, int], max_length: int, all_subwords: bool):
    """Tokenised sentences with a label per subword (`align_labels`)."""
    encoded = tokenizer(batch["tokens"], is_split_into_words=True, truncation=True, max_length=max_length)
    encoded["labels"] = [
        align_labels(encoded.word_ids(i), tags, label2id, all_subwords) for i, tags in enumerate(batch["ner_tags"])
    ]
    return encoded


def build_model(model_args: ModelArguments, tokenizer, labels: list[str]):
    """A token classifier over `labels`: the pretrained encoder with a new head, or a random one (tiny models)."""
    from transformers import AutoModelForTokenClassification

    label2id = {label: i for i, label in enumerate(labels)}
    config = encoder_config(
        model_args, tokenizer, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=label2id
    )
    weights = pretrained_weights(model_args)
    return (
        AutoModelForTokenClassification.from_pretrained(weights, config=config, ignore_mismatched_sizes=True)
        if weights
        else AutoModelForTokenClassification.from_config(config)
    )


def to_tags(predictions, label_ids, labels: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """(gold, predicted) tag sequences over the labelled subwords (label id not -100)."""
    true, pred = [], []
    for p_row, l_row in zip(predictions, label_ids):
        keep = l_row != -100
        true.append([labels[i] for i in l_row[keep]])
        pred.append([labels[i] for i in p_row[keep]])
    return true, pred


def iob_metrics(eval_prediction, labels: list[str], types: list[str]) -> dict:
    """The Trainer's evaluation: entity scores over the labelled subwords' tags, the scalars only (logged)."""
    import numpy as np

    true, predicted = to_tags(np.argmax(eval_prediction.predictions, axis=-1), eval_prediction.label_ids, labels)
    scores = span_scores([iob_spans(t) for t in true], [iob_spans(p) for p in predicted], types)
    return {key: value for key, value in scores.items() if not isinstance(value, list)}  # logged as scalars


def predicted_word_tags(final_dir, tokenized_test, sentences, tokenizer, labels, batch_size, max_length):
    """final/'s word-level tags for each test sentence (each word takes its first subword's tag)."""
    from transformers import AutoModelForTokenClassification, DataCollatorForTokenClassification

    logits = predict_logits(
        AutoModelForTokenClassification.from_pretrained(final_dir),
        tokenized_test,
        DataCollatorForTokenClassification(tokenizer),
        batch_size,
    )
    encoded = tokenizer(sentences, is_split_into_words=True, truncation=True, max_length=max_length)
    return [
        first_subword_tags(encoded.word_ids(i), row, len(words), labels)
        for i, (row, words) in enumerate(zip(logits.argmax(-1), sentences))
    ]


def prediction_records(test, predicted: list, gold_spans: list, predicted_spans: list, baseline: list) -> list[dict]:
    """RUN_DIR/test_predictions.jsonl's lines: each test sentence's tags and spans, gold, predicted and baseline."""
    return [
        {
            "id": row["id"],
            "report_id": row["report_id"],
            "tokens": row["tokens"],
            "gold_tags": row["ner_tags"],
            "predicted_tags": tags,
            "gold": sorted(g),
            "predicted": sorted(p),
            "baseline_word_majority": sorted(b),
        }
        for row, tags, g, p, b in zip(test, predicted, gold_spans, predicted_spans, baseline)
    ]


def evaluate_final(final_dir, *, run_dir, data, tokenized_test, tokenizer, labels, batch_size, max_length) -> dict:
    """Held-out results of final/: word-level entity scores on test beside the word-majority baseline; the test
    predictions are written."""
    test = data["test"]
    sentences, gold = list(test["tokens"]), list(test["ner_tags"])
    predicted = predicted_word_tags(final_dir, tokenized_test, sentences, tokenizer, labels, batch_size, max_length)
    gold_spans, predicted_spans = [iob_spans(t) for t in gold], [iob_spans(t) for t in predicted]
    train = data["train"]
    baseline = word_majority_spans(train["tokens"], [iob_spans(t) for t in train["ner_tags"]], sentences)
    results = span_scores(gold_spans, predicted_spans, entity_types(labels), prefix="test_")
    results["baseline_word_majority_test_f1"] = span_scores(gold_spans, baseline)["f1"]
    write_test_predictions(run_dir, prediction_records(test, predicted, gold_spans, predicted_spans, baseline))
    return results


def main(argv: list[str] | None = None):
    from transformers import DataCollatorForTokenClassification, Trainer

    model_args, data_args, training_args, iob_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    data, provenance = load_silver(data_args, "rate_ner", training_args.output_dir)
    labels = iob_labels(tuple(provenance["label_set"]["entity_types"]))  # the schema's, or a user's (data import)
    tokenizer = build_tokenizer(model_args, (" ".join(r["tokens"]) for r in data["train"]), training_args)
    label_map = {"labels": labels} if labels != get_component(COMPONENT).label_map["labels"] else None
    run_dir = start_run(
        COMPONENT, "rate_ner/iob", model_args, data_args, training_args, provenance, (iob_args,), label_map
    )
    tokenize = partial(
        tokenize_and_align,
        tokenizer=tokenizer,
        label2id={label: i for i, label in enumerate(labels)},
        max_length=data_args.max_seq_length,
        all_subwords=iob_args.label_all_subwords,
    )
    tokenized = map_on_main_first(data, tokenize, training_args, data_args, "tokenize")
    model = build_model(model_args, tokenizer, labels)
    datasets = (tokenized["train"], tokenized["validation"])
    collator = DataCollatorForTokenClassification(tokenizer)
    compute_metrics = partial(iob_metrics, labels=labels, types=entity_types(labels))
    trainer = recipe_trainer(Trainer, model, training_args, datasets, collator, compute_metrics, tokenizer)
    evaluate = partial(
        evaluate_final,
        run_dir=run_dir,
        data=data,
        tokenized_test=tokenized["test"],
        tokenizer=tokenizer,
        labels=labels,
        batch_size=training_args.per_device_eval_batch_size,
        max_length=data_args.max_seq_length,
    )
    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
