"""Where a trained RadGraph-style extractor's relations of one class go wrong, on the validation split (test
untouched).

    radmetrics data silver --out SILVER --labelers radgraph
    radmetrics train radgraph/train --config configs/radgraph/train/small.yaml --silver_dir SILVER --output_dir RUN
    python benchmarks/encoders/relation_errors.py --run RUN --silver_dir SILVER [--relation suggestive_of] \\
        [--results FILE]

Prints, for the relation's offset set to each of -3, -2.5, ..., +3 (the other classes' offsets as chosen on
validation),
its precision, recall, F1 and predicted count with the micro and macro relation F1; then each false positive's kind
(an endpoint that is not a gold entity, a gold pair with another relation, gold entities with no relation) and each
false negative's (an endpoint not predicted, or the pair predicted as another class or none); then the training split's
targets per source of the relation; and the first false positives with their sentences. `--results` also writes all of
it to a JSON file, with the command and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections import Counter
from pathlib import Path

import numpy as np

SWEEP = np.arange(-3.0, 3.01, 0.5)
EXAMPLES = 8


def words(tokens: list[str], start: int, end: int) -> str:
    return " ".join(tokens[start : end + 1])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a radgraph/train run directory (its final/ is read)")
    parser.add_argument("--silver_dir", type=Path, required=True)
    parser.add_argument("--relation", default="suggestive_of")
    parser.add_argument("--results", type=Path, help="write the figures printed here to this JSON file too")
    return parser.parse_args(argv)


def sentence_rows(silver_dir: Path) -> dict:
    """The silver DyGIE documents' train and validation splits, one row per sentence (the recipe's `sentences_of`)."""
    from datasets import load_from_disk

    from radmetrics.training.radgraph.train import sentences_of

    data = load_from_disk(str(silver_dir / "radgraph" / "hf"))
    return {
        split: data[split].map(sentences_of, batched=True, remove_columns=data[split].column_names)
        for split in ("train", "validation")
    }


def offset_sweep(scored, gold, labels: list[str], chosen: list[float], relation: str) -> list[dict]:
    """The relation's scores with its offset at each SWEEP value (the others' as chosen), printed as a table."""
    from radmetrics.training.span.decision_offsets import relation_scores

    target = labels.index(relation)
    print(f"| {relation} offset | precision | recall | F1 | predicted | relation micro F1 | relation macro F1 |")
    print("|---|---|---|---|---|---|---|")
    sweep = []
    for value in SWEEP:
        offsets = chosen[:target] + [float(value)] + chosen[target + 1 :]
        s = relation_scores(scored, gold, labels, offsets)
        r = relation
        sweep.append(
            {
                "offset": float(value),
                **{k: s[f"{k}_{r}"] for k in ("precision", "recall", "f1", "predicted")},
                "relation_micro_f1": s["f1"],
                "relation_macro_f1": s["macro_f1"],
            }
        )
        print(
            f"| {value:+.1f} | {s[f'precision_{r}']:.3f} | {s[f'recall_{r}']:.3f} | {s[f'f1_{r}']:.3f} |"
            f" {s[f'predicted_{r}']} | {s['f1']:.4f} | {s['macro_f1']:.4f} |"
        )
    return sweep


def sentence_errors(row, entities, predicted: set, relations: set, relation: str) -> tuple[list, Counter, Counter]:
    """One sentence's false positives of `relation` (predicted, not gold) and the kinds of its false positives and
    false negatives."""
    from radmetrics.training.radgraph.train import entity_set

    false_positives, false_negatives = Counter(), Counter()
    gold_spans = {(s, e) for s, e, _ in entity_set(row["entities"])}
    predicted_spans = {(s, e) for s, e, _ in entities}
    gold_pairs = {r[:4]: r[4] for r in relations}
    predicted_pairs = {r[:4]: r[4] for r in predicted}
    wrong = [r for r in predicted if r[4] == relation and r not in relations]
    for r in wrong:
        if r[:2] not in gold_spans or r[2:4] not in gold_spans:
            false_positives["an endpoint is not a gold entity"] += 1
        elif r[:4] in gold_pairs:
            false_positives[f"the gold pair is {gold_pairs[r[:4]]}"] += 1
        else:
            false_positives["gold entities, no gold relation"] += 1
    for r in relations:
        if r[4] == relation and r not in predicted:
            missed = r[:2] not in predicted_spans or r[2:4] not in predicted_spans
            false_negatives[
                "an endpoint not predicted" if missed else f"predicted {predicted_pairs.get(r[:4], 'none')}"
            ] += 1
    return wrong, false_positives, false_negatives


def error_kinds(validation, scored, gold, labels: list[str], chosen: list[float], relation: str):
    """(false positives by kind, false negatives by kind, the first EXAMPLES sentences with a false positive as
    (sentence, predicted not gold, gold) word pairs) at the chosen offsets."""
    from radmetrics.inference.models.span_extraction import relations_from_logits

    false_positives, false_negatives, examples = Counter(), Counter(), []
    for row, (entities, logits), relations in zip(validation, scored, gold):
        predicted = {tuple(r) for r in relations_from_logits(entities, logits, labels, chosen)}
        wrong, positives, negatives = sentence_errors(row, entities, predicted, relations, relation)
        false_positives.update(positives)
        false_negatives.update(negatives)
        if wrong and len(examples) < EXAMPLES:
            tokens = row["tokens"]
            examples.append(
                (
                    " ".join(tokens),
                    [(words(tokens, *r[:2]), words(tokens, *r[2:4])) for r in wrong],
                    [(words(tokens, *r[:2]), words(tokens, *r[2:4])) for r in relations if r[4] == relation],
                )
            )
    return false_positives, false_negatives, examples


def targets_per_source(train, relation: str) -> Counter:
    """How many targets each source of `relation` has in the training split: {targets: sources}."""
    from radmetrics.training.radgraph.train import relation_set

    per_source = Counter()
    for row in train:
        per_source.update(Counter(r[:2] for r in relation_set(row["relations"]) if r[4] == relation).values())
    return per_source


def main(argv: list[str] | None = None) -> None:
    from radmetrics.inference.files.atomic import write_text
    from radmetrics.inference.loading.hub import load_tokenizer
    from radmetrics.inference.metrics.radgraph.extractor import RadGraphExtractor
    from radmetrics.inference.models.span import SpanExtractor
    from radmetrics.training.radgraph.train import relation_set

    args = parse_args(argv)
    rows = sentence_rows(args.silver_dir)
    model = SpanExtractor.from_pretrained(args.run / "final")
    labels = model.config.relation_labels
    chosen = list(model.config.relation_decision_offsets or [0.0] * len(labels))
    extractor = RadGraphExtractor(model, load_tokenizer(args.run / "final", min_vocab=50))
    validation = rows["validation"]
    scored = extractor.scored(validation["tokens"])
    gold = [relation_set(r["relations"]) for r in validation]
    print(f"offsets chosen on validation: {dict(zip(labels, chosen))}")
    sweep = offset_sweep(scored, gold, labels, chosen, args.relation)
    false_positives, false_negatives, examples = error_kinds(validation, scored, gold, labels, chosen, args.relation)
    print(f"\nfalse positives: {dict(false_positives)}\nfalse negatives: {dict(false_negatives)}")
    per_source = targets_per_source(rows["train"], args.relation)
    print(f"training split, {args.relation} targets per source: {dict(sorted(per_source.items()))}\n")
    for sentence, wrong, right in examples:
        print(f"{sentence}\n  predicted, not gold: {wrong}\n  gold: {right}")
    if args.results:
        write_text(
            args.results,
            json.dumps(
                {
                    "command": "python benchmarks/encoders/relation_errors.py " + " ".join(sys.argv[1:]),
                    "machine": f"{platform.machine()} ({platform.system()}), {os.cpu_count()} CPU cores",
                    "split": "validation",
                    "relation": args.relation,
                    "offsets_chosen": dict(zip(labels, chosen)),
                    "offset_sweep": sweep,
                    "false_positives": dict(false_positives),
                    "false_negatives": dict(false_negatives),
                    "training_targets_per_source": {str(k): v for k, v in sorted(per_source.items())},
                    "examples": [{"sentence": a, "predicted_not_gold": b, "gold": c} for a, b, c in examples],
                },
                indent=2,
            )
            + "\n",
        )
        print(f"wrote {args.results}")


if __name__ == "__main__":
    main()
