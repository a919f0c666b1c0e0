"""What the span recipes (rate_ner/span, radgraph/train) share: span arguments, the span extractor
built on the recipe's encoder, class weights for its losses, a Trainer with separate encoder and head learning rates
(PURE trains the encoder at 1e-5 and the span head at 5e-4), and the word-majority baseline as spans (the IOB recipe
uses it too). Their scores come from scores.py beside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from transformers import Trainer

from ..common.encoders import build_wrapped_model
from ..common.evaluation_hook import ComponentMetricEvaluation


@dataclass
class SpanArguments:
    max_span_width: int = field(default=8, metadata={"help": "longest candidate span, in words (PURE/RaTE-NER: 8)"})
    width_embedding_size: int = field(default=64, metadata={"help": "size of the span-width embedding"})
    head_hidden_size: int = field(
        default=150, metadata={"help": "hidden size of the feed-forward heads (PURE: 150; RaTE-NER A.9: 3096)"}
    )
    head_layers: int = field(
        default=2, metadata={"help": "hidden layers of each head before its classifier (PURE: 2)"}
    )
    head_learning_rate: float = field(
        default=5e-4,
        metadata={"help": "learning rate of the heads and width embedding; the encoder uses --learning_rate"},
    )
    class_weight_power: float = field(
        default=0.0,
        metadata={
            "help": (
                "the entity and relation losses weight each class by its training frequency to the power -p, scaled to"
                " a mean of 1 over the training candidates: 0 is PURE's unweighted mean, 0.5 inverse square root, 1"
                " balanced. Rare classes (DISEASE, OBS-U, suggestive_of) drown among null spans without it"
            )
        },
    )
    relation_class_weight_power: float | None = field(
        default=None, metadata={"help": "the same for the relation loss alone (unset: --class_weight_power)"}
    )
    tune_relation_offsets: bool = field(
        default=False,
        metadata={
            "help": (
                "after training, choose an offset per relation class's logit on the validation split (relation macro "
                "F1; training/span/decision_offsets.py) and save it in the final model's config, which inference "
                "applies "
                "(radgraph/train; rate_ner/span has no relation head)"
            )
        },
    )


class TwoRateTrainer(ComponentMetricEvaluation, Trainer):
    """HF Trainer whose AdamW gives the encoder `args.learning_rate` and everything else (span heads, width
    embedding) `head_learning_rate`; `component_eval` adds end-to-end scores to each evaluation. DeepSpeed uses this
    optimizer when its config has no "optimizer" block (configs/deepspeed/zero3.json has none for that reason); a
    config with one would replace it, and the heads would silently train at the encoder's rate, so it is refused."""

    def __init__(self, *args, head_learning_rate: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_learning_rate = head_learning_rate
        refuse_deepspeed_optimizer(self.args.deepspeed)

    def create_optimizer(self, model=None):
        model = self.model if model is None else model
        if self.optimizer is None:
            decay = set(self.get_decay_parameter_names(model))
            groups = []
            for is_encoder, lr in ((True, self.args.learning_rate), (False, self.head_learning_rate)):
                for decayed in (True, False):
                    params = [
                        p
                        for n, p in model.named_parameters()
                        if p.requires_grad and n.startswith("encoder.") == is_encoder and (n in decay) == decayed
                    ]
                    if params:
                        groups.append(
                            {"params": params, "lr": lr, "weight_decay": self.args.weight_decay if decayed else 0.0}
                        )
            optimizer_cls, optimizer_kwargs = self.get_optimizer_cls_and_kwargs(self.args, model)
            self.optimizer = optimizer_cls(groups, **optimizer_kwargs)
        return self.optimizer


def refuse_deepspeed_optimizer(deepspeed: str | dict | None) -> None:
    """Raise if a DeepSpeed config (path or dict) has an "optimizer" block, which replaces the Trainer's optimizer."""
    import json

    config = json.loads(Path(deepspeed).read_text()) if isinstance(deepspeed, (str, Path)) else (deepspeed or {})
    if "optimizer" in config:
        raise ValueError(
            f'{deepspeed}: its "optimizer" block would replace the two-rate AdamW of the span heads; '
            "use a DeepSpeed config without one (configs/deepspeed/zero3.json)"
        )


def class_weights(label_rows: Iterable[Sequence[int]], classes: int, power: float) -> list[float] | None:
    """Loss weight of each class id: count ** -power (an absent class counts 1), scaled so that the mean weight over
    the training instances is 1 (a weight then says how much more than an average instance the class counts; the
    loss, a weighted mean, does not depend on the scale). None when power is 0 (the unweighted mean); -100 marks an
    ignored instance."""
    if not power:
        return None
    counts = Counter(label for row in label_rows for label in row if label != -100)
    raw = [max(counts[c], 1) ** -power for c in range(classes)]
    mean = sum(counts[c] * raw[c] for c in range(classes)) / max(sum(counts.values()), 1)
    return [w / mean for w in raw]


def build_span_model(
    model_args,
    span_args: SpanArguments,
    tokenizer,
    entity_labels,
    relation_labels=(),
    entity_class_weights=None,
    relation_class_weights=None,
):
    from radmetrics.inference.models.span import SpanExtractor

    return build_wrapped_model(
        SpanExtractor,
        model_args,
        tokenizer,
        entity_labels=list(entity_labels),
        relation_labels=list(relation_labels),
        max_span_width=span_args.max_span_width,
        width_embedding_size=span_args.width_embedding_size,
        head_hidden_size=span_args.head_hidden_size,
        head_layers=span_args.head_layers,
        entity_class_weights=entity_class_weights,
        relation_class_weights=relation_class_weights,
    )


def span_label_ids(spans, gold: dict[tuple[int, int], str], label2id: dict[str, int]) -> list[int]:
    """Class of every candidate span: its gold label, or 0 (null)."""
    return [label2id[gold[span]] if span in gold else 0 for span in spans]


def word_majority_spans(train_sentences, train_spans, eval_sentences) -> list[set]:
    """Baseline: each word takes the type it most often belongs to in training (none if mostly outside an
    entity or unseen); runs of words with the same type become one span."""
    counts: dict[str, Counter] = {}
    for words, spans in zip(train_sentences, train_spans):
        label_of = {i: label for s, e, label in spans for i in range(s, e + 1)}
        for i, word in enumerate(words):
            counts.setdefault(word.lower(), Counter())[label_of.get(i)] += 1
    predicted = []
    for words in eval_sentences:
        labels = [counts[w.lower()].most_common(1)[0][0] if w.lower() in counts else None for w in words]
        spans, start = set(), 0
        for i in range(1, len(labels) + 1):
            if i == len(labels) or labels[i] != labels[start]:
                if labels[start] is not None:
                    spans.add((start, i - 1, labels[start]))
                start = i
        predicted.append(spans)
    return predicted
