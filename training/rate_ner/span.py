"""RaTE-NER span recipe, PURE-style (Zhong & Chen 2020; seed 001 appendix A.9): every span of up to 8
words, [start; end; width] representation, feed-forward head with a null class, encoder and head
learning rates apart; span-level micro precision/recall/F1 (exact boundaries and type) and those of every entity
type (span/scores.py: macro F1, per-class rows, classes never predicted) on held-out data, against the word-majority
baseline; `--class_weight_power` weights the rare types in the loss. The test predictions and the baseline's go to
RUN_DIR/test_predictions.jsonl.

    radmetrics train rate_ner/span --config configs/rate_ner/span/tiny.yaml
"""

from __future__ import annotations

import sys

from transformers import TrainingArguments

from radmetrics.inference.loading.components import get_component

from ..common.arguments import DataArguments, ModelArguments
from ..common.encoders import build_tokenizer, check_user_silver, load_silver, map_on_main_first
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish, write_test_predictions
from ..config import RecipeParser
from ..span.scores import span_classification_scores, span_scores
from ..span.trainer import (
    SpanArguments,
    TwoRateTrainer,
    build_span_model,
    class_weights,
    span_label_ids,
    word_majority_spans,
)

COMPONENT = "rate_ner_span"
ARGUMENT_TYPES = (ModelArguments, DataArguments, TrainingArguments, SpanArguments)


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `silver_dir` checked as the run reads it, before `radmetrics rehearse` launches anything
    (encoders.check_user_silver); None for bundled silver labels."""
    return check_user_silver(config, overrides, "rate_ner", SpanArguments)


def gold_spans(row) -> set[tuple[int, int, str]]:
    return {(s["start"], s["end"], s["label"]) for s in row["spans"]}


def main(argv: list[str] | None = None):
    from radmetrics.inference.metrics.ratescore.taggers import RateNerSpanTagger
    from radmetrics.inference.models.span import SpanExtractor
    from radmetrics.inference.models.span_extraction import SpanCollator, encode_span_inputs

    model_args, data_args, training_args, span_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    training_args.label_names = ["span_labels"]
    data, provenance = load_silver(data_args, "rate_ner", training_args.output_dir, span_args.max_span_width)
    schema = get_component(COMPONENT).label_map
    labels = ["NULL", *provenance["label_set"]["entity_types"]]  # the schema's, or a user's (data import)
    label2id = {label: i for i, label in enumerate(labels)}
    tokenizer = build_tokenizer(model_args, (" ".join(r["tokens"]) for r in data["train"]), training_args)
    label_map = {**schema, "labels": labels} if labels != schema["labels"] else None
    run_dir = start_run(
        COMPONENT, "rate_ner/span", model_args, data_args, training_args, provenance, (span_args,), label_map
    )

    def featurize(batch):
        rows = encode_span_inputs(tokenizer, batch["tokens"], span_args.max_span_width, data_args.max_seq_length)
        for row, spans in zip(rows, batch["spans"]):
            row["span_labels"] = span_label_ids(
                row.pop("spans"), {(s["start"], s["end"]): s["label"] for s in spans}, label2id
            )
        return {key: [row[key] for row in rows] for key in rows[0]}

    features = map_on_main_first(data, featurize, training_args, data_args, "featurize")

    weights = class_weights(features["train"]["span_labels"], len(labels), span_args.class_weight_power)
    model = build_span_model(model_args, span_args, tokenizer, labels, entity_class_weights=weights)

    def compute_metrics(eval_prediction):
        return span_classification_scores(eval_prediction.predictions, eval_prediction.label_ids, labels)

    datasets, collator = (features["train"], features["validation"]), SpanCollator(tokenizer)
    extra = dict(head_learning_rate=span_args.head_learning_rate)
    trainer = recipe_trainer(
        TwoRateTrainer, model, training_args, datasets, collator, compute_metrics, tokenizer, **extra
    )

    def evaluate(final_dir) -> dict:
        tagger = RateNerSpanTagger(
            SpanExtractor.from_pretrained(final_dir),
            tokenizer,
            batch_size=training_args.per_device_eval_batch_size,
            max_length=data_args.max_seq_length,
        )
        test, train = data["test"], data["train"]
        predicted = [{tuple(e) for e in entities} for entities, _ in tagger.extract(test["tokens"])]
        gold = [gold_spans(row) for row in test]
        baseline = word_majority_spans(train["tokens"], [gold_spans(r) for r in train], test["tokens"])
        results = span_scores(gold, predicted, labels[1:], prefix="test_")
        results["baseline_word_majority_test_f1"] = span_scores(gold, baseline)["f1"]
        write_test_predictions(
            run_dir,
            [
                {
                    "id": row["id"],
                    "report_id": row["report_id"],
                    "tokens": row["tokens"],
                    "gold": sorted(g),
                    "predicted": sorted(p),
                    "baseline_word_majority": sorted(b),
                }
                for row, g, p, b in zip(test, gold, predicted, baseline)
            ],
        )
        return results

    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
