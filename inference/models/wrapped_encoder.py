"""Bases for models that wrap any AutoModel encoder (CheXbert-style labeler, span extractor): the encoder's config
is stored inside the wrapper's, so an export rebuilds the right encoder class offline."""

from __future__ import annotations

from torch import nn
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel


class WrappedEncoderConfig(PretrainedConfig):
    def __init__(self, encoder: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder or {}
        if "hidden_size" in self.encoder:  # read by DeepSpeed's "auto" bucket sizes
            self.hidden_size = self.encoder["hidden_size"]

    @classmethod
    def from_encoder(cls, encoder_config: PretrainedConfig, **kwargs):
        return cls(encoder=encoder_config.to_dict(), **kwargs)

    def encoder_config(self) -> PretrainedConfig:
        values = dict(self.encoder)
        return AutoConfig.for_model(values.pop("model_type"), **values)


class WrappedEncoderModel(PreTrainedModel):
    """`self.encoder` built from the stored encoder config, and dropout; subclasses add their heads, then call
    `post_init()`. The input embeddings are the encoder's (used by resizing and the FLOP count)."""

    base_model_prefix = "encoder"
    supports_gradient_checkpointing = True

    def __init__(self, config: WrappedEncoderConfig):
        super().__init__(config)
        self.encoder = AutoModel.from_config(config.encoder_config())
        self.dropout = nn.Dropout(config.dropout)

    @property
    def hidden_size(self) -> int:
        return self.encoder.config.hidden_size

    def get_input_embeddings(self):
        return self.encoder.get_input_embeddings()
