"""CheXbert-style labeler (Smit et al. 2020): an encoder's [CLS] state -> 13 four-class heads
(blank, positive, negative, uncertain) + 1 two-class head (No Finding: blank, positive), trained with
the sum of the 14 cross-entropies.

Registered with the Auto classes (`model_type = "radmetrics_chexbert"`), so an exported labeler loads
with `AutoModel.from_pretrained(path)` once `radmetrics.inference` is imported; the encoder config is
stored inside the labeler's config, so any AutoModel encoder (BERT, DeBERTa, MiniLM) works.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import AutoConfig, AutoModel

from ...loading.components import CHEXPERT_CONDITIONS, get_component
from ...models.wrapped_encoder import WrappedEncoderConfig, WrappedEncoderModel


class CheXbertConfig(WrappedEncoderConfig):
    model_type = "radmetrics_chexbert"

    def __init__(
        self,
        encoder: dict | None = None,
        conditions: list[str] | None = None,
        classes_per_head: list[int] | None = None,
        dropout: float = 0.1,
        **kwargs,
    ):
        super().__init__(encoder=encoder, **kwargs)
        self.conditions = conditions or list(CHEXPERT_CONDITIONS)
        label_map = get_component("chexbert").label_map
        default_classes = [
            len(label_map["no_finding_classes"]) if c == "No Finding" else len(label_map["classes"])
            for c in self.conditions
        ]
        self.classes_per_head = classes_per_head or default_classes
        self.dropout = dropout


class CheXbertLabeler(WrappedEncoderModel):
    config_class = CheXbertConfig

    def __init__(self, config: CheXbertConfig):
        super().__init__(config)
        self.heads = nn.ModuleList(nn.Linear(self.hidden_size, n) for n in config.classes_per_head)
        self.post_init()

    def cls_embedding(self, input_ids, attention_mask=None, token_type_ids=None) -> torch.Tensor:
        """The [CLS] hidden state (CheXbert vector similarity compares these)."""
        kwargs = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask, **kwargs).last_hidden_state[:, 0]

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        pooled = self.dropout(self.cls_embedding(input_ids, attention_mask, token_type_ids))
        logits = [head(pooled) for head in self.heads]
        output = {"logits": torch.cat(logits, dim=-1)}
        if labels is not None:
            output["loss"] = sum(
                nn.functional.cross_entropy(head_logits, labels[:, i]) for i, head_logits in enumerate(logits)
            )
        return output


def argmax_per_head(logits, classes_per_head: list[int]):
    """Concatenated head logits (reports x sum of classes) -> the argmax class of each head (reports x heads)."""
    parts = torch.split(torch.as_tensor(logits), classes_per_head, dim=-1)
    return torch.stack([p.argmax(-1) for p in parts], dim=-1)


AutoConfig.register(CheXbertConfig.model_type, CheXbertConfig)
AutoModel.register(CheXbertConfig, CheXbertLabeler)
