"""Config base for models that wrap any AutoModel encoder (CheXbert-style labeler, span extractor): the
encoder's config is stored inside the wrapper's, so an export rebuilds the right encoder class offline."""

from __future__ import annotations

from transformers import AutoConfig, PretrainedConfig


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
