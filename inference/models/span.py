"""Span extractor shared by RaTE-NER span (PURE entity model, Zhong & Chen 2020; seed 001 A.9) and the
RadGraph-style extractor (DyGIE-style pairwise relations over span representations, as RadGraph's
baseline did).

Every span of up to `max_span_width` words is represented as [h(first subword of its first word);
h(last subword of its last word); width embedding] and classified by a feed-forward head whose class 0
is the null class. With `relation_labels`, each ordered pair of entity spans (gold spans in training,
predicted ones at inference) is classified by a second feed-forward head over [a; b; a * b], class 0
again null. Registered as `model_type = "radmetrics_span"` so an export loads with
`AutoModel.from_pretrained` once `radmetrics.inference` is imported; the encoder config is stored
inside, so any AutoModel encoder (BERT, DeBERTa-v3, MiniLM) works.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import AutoConfig, AutoModel

from .wrapped_encoder import WrappedEncoderConfig, WrappedEncoderModel


class SpanExtractorConfig(WrappedEncoderConfig):
    model_type = "radmetrics_span"

    def __init__(
        self,
        encoder: dict | None = None,
        entity_labels: list[str] | None = None,
        relation_labels: list[str] | None = None,
        max_span_width: int = 8,
        width_embedding_size: int = 64,
        head_hidden_size: int = 150,
        head_layers: int = 2,
        dropout: float = 0.1,
        entity_class_weights: list[float] | None = None,
        relation_class_weights: list[float] | None = None,
        relation_decision_offsets: list[float] | None = None,
        **kwargs,
    ):
        super().__init__(encoder=encoder, **kwargs)
        self.entity_labels = list(entity_labels or ["NULL"])
        self.relation_labels = list(relation_labels or [])
        self.max_span_width = max_span_width
        self.width_embedding_size = width_embedding_size
        self.head_hidden_size = head_hidden_size
        self.head_layers = head_layers
        self.dropout = dropout
        self.entity_class_weights = entity_class_weights  # loss weight per class (training only; None: unweighted)
        self.relation_class_weights = relation_class_weights
        # added to each relation class's logit before the argmax at inference (the null class first); chosen on
        # validation after training (training/span/decision_offsets.py). None: the plain argmax
        self.relation_decision_offsets = relation_decision_offsets
        self.keys_to_ignore_at_inference = ["relation_logits"]  # Trainer evaluation gathers entity logits only


def _feed_forward(inputs: int, hidden: int, outputs: int, hidden_layers: int, dropout: float) -> nn.Sequential:
    """`hidden_layers` ReLU layers then a linear classifier (PURE: 2 + 1, i.e. the paper's 3-layer MLP)."""
    layers: list[nn.Module] = []
    for n in range(hidden_layers):
        layers += [nn.Linear(inputs if n == 0 else hidden, hidden), nn.ReLU(), nn.Dropout(dropout)]
    return nn.Sequential(*layers, nn.Linear(hidden if hidden_layers else inputs, outputs))


def _gather(states: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """states (B, T, D), index (B, N) -> (B, N, D); negative (padding) indices read position 0."""
    index = index.clamp(min=0)
    return states.gather(1, index.unsqueeze(-1).expand(-1, -1, states.size(-1)))


class SpanExtractor(WrappedEncoderModel):
    config_class = SpanExtractorConfig

    def __init__(self, config: SpanExtractorConfig):
        super().__init__(config)
        span_size = 2 * self.hidden_size + config.width_embedding_size
        self.width_embedding = nn.Embedding(config.max_span_width, config.width_embedding_size)
        self.entity_head = _feed_forward(
            span_size, config.head_hidden_size, len(config.entity_labels), config.head_layers, config.dropout
        )
        self.relation_head = (
            _feed_forward(
                3 * span_size, config.head_hidden_size, len(config.relation_labels), config.head_layers, config.dropout
            )
            if config.relation_labels
            else None
        )
        self.post_init()

    def span_representations(self, input_ids, attention_mask, token_type_ids, span_starts, span_ends, span_widths):
        kwargs = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **kwargs).last_hidden_state
        width = self.width_embedding(span_widths.clamp(0, self.config.max_span_width - 1))
        return self.dropout(torch.cat([_gather(states, span_starts), _gather(states, span_ends), width], dim=-1))

    def relation_logits(self, spans: torch.Tensor, entity_index: torch.Tensor) -> torch.Tensor:
        """spans (B, S, D), entity_index (B, K) into S (-1 = padding) -> logits (B, K, K, relations) for
        every ordered pair (source, target)."""
        entities = _gather(spans, entity_index)
        k = entities.size(1)
        source = entities.unsqueeze(2).expand(-1, -1, k, -1)
        target = entities.unsqueeze(1).expand(-1, k, -1, -1)
        return self.relation_head(torch.cat([source, target, source * target], dim=-1))

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        span_starts=None,
        span_ends=None,
        span_widths=None,
        span_labels=None,
        entity_index=None,
        relation_labels=None,
        **kwargs,
    ):
        spans = self.span_representations(
            input_ids, attention_mask, token_type_ids, span_starts, span_ends, span_widths
        )
        output = {"logits": self.entity_head(spans)}
        if self.relation_head is not None and entity_index is not None and entity_index.size(1) > 0:
            output["relation_logits"] = self.relation_logits(spans, entity_index)
        if span_labels is not None:
            loss = self._loss(output["logits"].flatten(0, 1), span_labels.flatten(), self.config.entity_class_weights)
            if "relation_logits" in output and relation_labels is not None and (relation_labels != -100).any():
                loss = loss + self._loss(
                    output["relation_logits"].flatten(0, 2),
                    relation_labels.flatten(),
                    self.config.relation_class_weights,
                )
            output["loss"] = loss
        return output

    @staticmethod
    def _loss(logits: torch.Tensor, labels: torch.Tensor, weights: list[float] | None) -> torch.Tensor:
        """Cross-entropy, class-weighted when the config has weights (a weighted mean, as torch defines it)."""
        weight = torch.tensor(weights, dtype=logits.dtype, device=logits.device) if weights else None
        return nn.functional.cross_entropy(logits, labels, weight=weight, ignore_index=-100)


AutoConfig.register(SpanExtractorConfig.model_type, SpanExtractorConfig)
AutoModel.register(SpanExtractorConfig, SpanExtractor)
