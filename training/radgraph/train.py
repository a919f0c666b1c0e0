"""RadGraph-style extractor recipe: span entities (ANAT-DP, OBS-DP, OBS-U, OBS-DA) and pairwise relations
(modify, located_at, suggestive_of) in the RadGraph schema (Jain et al. 2021), trained on the silver DyGIE
documents one sentence at a time; entity and relation losses are summed, relations are learned on gold
entity pairs and predicted on the model's own entities. The export emits the radgraph package's
annotation dict (`RadGraphExtractor.annotations`).

Held-out scores (span/scores.py): entity and relation micro and macro P/R/F1 (exact spans and labels, end to end),
those of every entity and relation label and the labels never predicted, on the silver test split against the
word-majority baseline, and agreement with the radgraph package's gold annotations next to the silver extractor's.
Each periodic evaluation logs the same end-to-end scores on validation next to the loss. The test predictions and the
baseline's go to RUN_DIR/test_predictions.jsonl. With `--tune_relation_offsets`, an offset per relation class's logit
is chosen on validation after training and saved in final/'s config before the test split is read
(span/decision_offsets.py).

    radmetrics train radgraph/train --config configs/radgraph/train/tiny.yaml
"""

from __future__ import annotations

import sys
from functools import partial

from transformers import TrainingArguments

from radmetrics.inference.loading.components import get_component

from ..common.arguments import DataArguments, ModelArguments
from ..common.encoders import build_tokenizer, check_user_silver, load_silver, map_on_main_first
from ..common.lifecycle import recipe_trainer, start_run, train_and_finish, write_test_predictions
from ..config import RecipeParser
from ..span.decision_offsets import tune_relation_offsets
from ..span.scores import span_classification_scores, span_scores
from ..span.trainer import (
    SpanArguments,
    TwoRateTrainer,
    build_span_model,
    class_weights,
    span_label_ids,
    word_majority_spans,
)

COMPONENT = "radgraph"
ARGUMENT_TYPES = (ModelArguments, DataArguments, TrainingArguments, SpanArguments)


SPAN_KEYS = ("start", "end", "label")
RELATION_KEYS = ("source_start", "source_end", "target_start", "target_end", "label")


def check_data(config: str, overrides: list[str]) -> str | None:
    """The user's `silver_dir` checked as the run reads it, before `radmetrics rehearse` launches anything
    (encoders.check_user_silver); None for bundled silver labels."""
    return check_user_silver(config, overrides, "radgraph", SpanArguments)


def sentences_of(batch) -> dict[str, list]:
    """DyGIE documents (HF copy: struct spans, document-level indices) -> one row per sentence with its `id`
    (doc_key#n), `report_id` (the doc_key) and sentence-level `entities` and `relations` (structs, as in the HF copy).
    """
    out: dict[str, list] = {"id": [], "report_id": [], "tokens": [], "entities": [], "relations": []}
    for doc_key, sentences, ner, relations in zip(
        batch["doc_key"], batch["sentences"], batch["ner"], batch["relations"]
    ):
        offset = 0
        for n, (words, entities, links) in enumerate(zip(sentences, ner, relations)):
            out["id"].append(f"{doc_key}#{n}")
            out["report_id"].append(doc_key)
            out["tokens"].append(words)
            out["entities"].append([{**e, "start": e["start"] - offset, "end": e["end"] - offset} for e in entities])
            out["relations"].append([{**r, **{k: r[k] - offset for k in RELATION_KEYS[:4]}} for r in links])
            offset += len(words)
    return out


def entity_set(entities) -> set[tuple]:
    """(start, end, label) of each entity struct."""
    return {tuple(e[k] for k in SPAN_KEYS) for e in entities}


def relation_set(relations) -> set[tuple]:
    """(s1, e1, s2, e2, label) of each relation struct."""
    return {tuple(r[k] for k in RELATION_KEYS) for r in relations}


def radgraph_label_map(provenance: dict) -> dict[str, list[str]]:
    """The run's entity and relation labels, NULL first: the schema's, or a user's (data import)."""
    user = provenance["label_set"]
    return {"entities": ["NULL", *user["entities"]], "relations": ["NULL", *user["relations"]]}


def label_ids(labels: list[str]) -> dict[str, int]:
    return {label: i for i, label in enumerate(labels)}


def featurize(batch, tokenizer, label_map: dict, max_span_width: int, max_length: int) -> dict[str, list]:
    """Sentence rows -> span inputs, a label per enumerated span, the gold entities' span positions and a relation
    label per ordered pair of gold entities (-100 on the diagonal, 0 for no relation)."""
    from radmetrics.inference.models.span_extraction import encode_span_inputs

    entity_ids, relation_ids = label_ids(label_map["entities"]), label_ids(label_map["relations"])
    rows = encode_span_inputs(tokenizer, batch["tokens"], max_span_width, max_length)
    for row, entities, relations in zip(rows, batch["entities"], batch["relations"]):
        spans = row.pop("spans")
        gold = sorted(entity_set(entities))
        row["span_labels"] = span_label_ids(spans, {(s, e): label for s, e, label in gold}, entity_ids)
        position = {span: i for i, span in enumerate(spans)}
        kept = [(s, e) for s, e, _ in gold if (s, e) in position]
        row["entity_index"] = [position[span] for span in kept]
        linked = {link[:4]: relation_ids[link[4]] for link in relation_set(relations)}
        row["relation_labels"] = [
            -100 if i == j else linked.get((*source, *target), 0)
            for i, source in enumerate(kept)
            for j, target in enumerate(kept)
        ]
    return {key: [row[key] for row in rows] for key in rows[0]}


def loss_class_weights(train_features, label_map: dict, span_args: SpanArguments) -> dict:
    """The entity and relation losses' class weights from the training features' label counts
    (`relation_class_weight_power`, when set, for the relations)."""
    relation_power = span_args.relation_class_weight_power
    return dict(
        entity_class_weights=class_weights(
            train_features["span_labels"], len(label_map["entities"]), span_args.class_weight_power
        ),
        relation_class_weights=class_weights(
            train_features["relation_labels"],
            len(label_map["relations"]),
            span_args.class_weight_power if relation_power is None else relation_power,
        ),
    )


def entity_metrics(eval_prediction, entity_labels: list[str]) -> dict:
    """The Trainer's evaluation: span classification scores of the entities (relations need decoding)."""
    return span_classification_scores(eval_prediction.predictions, eval_prediction.label_ids, entity_labels)


def extractor_of(model, tokenizer, batch_size: int, max_length: int):
    """The inference extractor over `model`, as the export runs it."""
    from radmetrics.inference.metrics.radgraph.extractor import RadGraphExtractor

    return RadGraphExtractor(model, tokenizer, batch_size=batch_size, max_length=max_length)


def end_to_end_scores(extractor, rows, label_map: dict) -> dict:
    """End-to-end entity and relation scores on `rows` (the model's own entities feed its relations), with the gold
    and predicted sets: {"gold": (entities, relations), "predicted": (entities, relations), "scores": {...}}."""
    predicted = extractor.extract(rows["tokens"])
    gold_entities, gold_relations = (
        [entity_set(r["entities"]) for r in rows],
        [relation_set(r["relations"]) for r in rows],
    )
    entities, relations = (
        [{tuple(e) for e in p[0]} for p in predicted],
        [{tuple(r) for r in p[1]} for p in predicted],
    )
    return {
        "gold": (gold_entities, gold_relations),
        "predicted": (entities, relations),
        "scores": {
            **span_scores(gold_entities, entities, label_map["entities"][1:], prefix="entity_"),
            **span_scores(gold_relations, relations, label_map["relations"][1:], prefix="relation_"),
        },
    }


def end_to_end_validation(current_model, *, make_extractor, rows, label_map: dict) -> dict:
    """Relation F1 next to the loss: the Trainer's own pass sees entities only."""
    return end_to_end_scores(make_extractor(current_model), rows, label_map)["scores"]


def choose_relation_offsets(final_dir, final_model, extractor, validation, relation_labels: list[str]) -> dict:
    """Offsets chosen on validation, saved into final/'s config before the test split is read."""
    tuned = tune_relation_offsets(
        extractor.scored(validation["tokens"]),
        [relation_set(r["relations"]) for r in validation],
        relation_labels,
    )
    final_model.config.relation_decision_offsets = tuned["offsets"]
    final_model.config.save_pretrained(final_dir)
    return {
        "relation_decision_offsets": tuned["offsets"],
        **{
            f"validation_relation_{key}_{when}": value
            for when in ("before", "after")
            for key, value in tuned[f"validation_{when}"].items()
        },
    }


def prediction_records(test, scored: dict, baseline: list) -> list[dict]:
    """RUN_DIR/test_predictions.jsonl's lines: each test sentence's gold, predicted and baseline sets."""
    (gold_entities, gold_relations), (entities, relations) = scored["gold"], scored["predicted"]
    return [
        {
            "id": row["id"],
            "report_id": row["report_id"],
            "tokens": row["tokens"],
            "gold_entities": sorted(ge),
            "predicted_entities": sorted(pe),
            "baseline_word_majority_entities": sorted(b),
            "gold_relations": sorted(gr),
            "predicted_relations": sorted(pr),
        }
        for row, ge, pe, b, gr, pr in zip(test, gold_entities, entities, baseline, gold_relations, relations)
    ]


def evaluate_final(final_dir, *, run_dir, data, label_map: dict, make_extractor, tune_offsets: bool) -> dict:
    """Held-out results of final/: relation offsets chosen on validation (when tuned), end-to-end test scores beside
    the word-majority baseline, the test predictions written, and agreement with the radgraph package's gold."""
    from radmetrics.data_builders.agreement.radgraph import agreement_with_gold
    from radmetrics.inference.models.span import SpanExtractor

    final_model = SpanExtractor.from_pretrained(final_dir)
    chosen = (
        choose_relation_offsets(
            final_dir, final_model, make_extractor(final_model), data["validation"], label_map["relations"]
        )
        if tune_offsets
        else {}
    )
    extractor = make_extractor(final_model)
    test, train = data["test"], data["train"]
    scored = end_to_end_scores(extractor, test, label_map)
    baseline = word_majority_spans(train["tokens"], [entity_set(r["entities"]) for r in train], test["tokens"])
    results = {**chosen, **{f"test_{key}": value for key, value in scored["scores"].items()}}
    results["baseline_word_majority_test_entity_f1"] = span_scores(scored["gold"][0], baseline)["f1"]
    write_test_predictions(run_dir, prediction_records(test, scored, baseline))
    ours, silver = agreement_with_gold(extractor.extract), agreement_with_gold()
    for name in ("entities", "relations"):
        results[f"radgraph_gold_{name}_f1"] = ours[name]["f1"]
        results[f"silver_extractor_radgraph_gold_{name}_f1"] = silver[name]["f1"]
    return results


def main(argv: list[str] | None = None):
    from radmetrics.inference.models.span_extraction import SpanCollator

    model_args, data_args, training_args, span_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    training_args.label_names = ["span_labels"]
    documents, provenance = load_silver(data_args, "radgraph", training_args.output_dir, span_args.max_span_width)
    label_map = radgraph_label_map(provenance)
    data = map_on_main_first(documents, sentences_of, training_args, data_args, "split sentences")
    tokenizer = build_tokenizer(model_args, (" ".join(r["tokens"]) for r in data["train"]), training_args)
    own = label_map if label_map != get_component(COMPONENT).label_map else None
    run_dir = start_run(
        COMPONENT, "radgraph/train", model_args, data_args, training_args, provenance, (span_args,), own
    )
    to_features = partial(
        featurize,
        tokenizer=tokenizer,
        label_map=label_map,
        max_span_width=span_args.max_span_width,
        max_length=data_args.max_seq_length,
    )
    features = map_on_main_first(data, to_features, training_args, data_args, "featurize")
    weights = loss_class_weights(features["train"], label_map, span_args)
    model = build_span_model(
        model_args, span_args, tokenizer, label_map["entities"], label_map["relations"], **weights
    )
    make_extractor = partial(
        extractor_of,
        tokenizer=tokenizer,
        batch_size=training_args.per_device_eval_batch_size,
        max_length=data_args.max_seq_length,
    )
    validation = partial(
        end_to_end_validation, make_extractor=make_extractor, rows=data["validation"], label_map=label_map
    )
    datasets, collator = (features["train"], features["validation"]), SpanCollator(tokenizer)
    extra = dict(head_learning_rate=span_args.head_learning_rate, component_eval=validation)
    compute_metrics = partial(entity_metrics, entity_labels=label_map["entities"])
    trainer = recipe_trainer(
        TwoRateTrainer, model, training_args, datasets, collator, compute_metrics, tokenizer, **extra
    )
    evaluate = partial(
        evaluate_final,
        run_dir=run_dir,
        data=data,
        label_map=label_map,
        make_extractor=make_extractor,
        tune_offsets=span_args.tune_relation_offsets,
    )
    train_and_finish(trainer, tokenizer, run_dir, evaluate, sequence_length=data_args.max_seq_length)
    return run_dir


if __name__ == "__main__":
    main(sys.argv[1:])
