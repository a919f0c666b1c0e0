"""Run a CheXbert-style export over report text: 14 head classes per report and [CLS] embeddings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class CheXbertRunner:
    def __init__(self, path: str, batch_size: int = 32, max_length: int = 512):
        import torch

        from ...loading.checkpoint import load_manifest
        from ...loading.hub import inference_device, load_tokenizer
        from .labeler import CheXbertLabeler

        directory, self.manifest = load_manifest(path, "chexbert")
        self.tokenizer = load_tokenizer(directory, min_vocab=50)
        self.model = CheXbertLabeler.from_pretrained(directory).eval().to(inference_device())
        self.batch_size, self.max_length, self._torch = batch_size, max_length, torch

    def _batches(self, reports: Sequence[str]):
        for start in range(0, len(reports), self.batch_size):
            encoded = self.tokenizer(list(reports[start:start + self.batch_size]), truncation=True, padding=True,
                                     max_length=self.max_length, return_tensors="pt")
            yield {k: v.to(self.model.device) for k, v in encoded.items()}

    def labels_and_embeddings(self, reports: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(reports x 14 head classes: 0 blank 1 positive 2 negative 3 uncertain, reports x hidden [CLS] states)."""
        from .labeler import argmax_per_head

        classes, embeddings = [], []
        with self._torch.no_grad():
            for batch in self._batches(reports):
                cls = self.model.cls_embedding(batch["input_ids"], batch.get("attention_mask"), batch.get("token_type_ids"))
                logits = self._torch.cat([head(cls) for head in self.model.heads], dim=-1)  # eval: dropout is identity
                classes.append(argmax_per_head(logits, self.model.config.classes_per_head).cpu().numpy())
                embeddings.append(cls.float().cpu().numpy())
        return np.concatenate(classes), np.concatenate(embeddings)
