"""Run a CheXbert labeler over report text: 14 head classes per report and its [CLS] embedding.

Text is prepared as f1chexbert==0.0.2 prepares it (stanfordmlgroup/CheXbert `tokenize`): stripped,
newlines and whitespace runs made single spaces, wordpieces between [CLS] and [SEP], cut to the first 511
ids + [SEP]. The reference labels one report at a time; here each distinct report is run once and reports of
equal token length share a batch (no padding), which gives the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ...loading.checkpoint import load_manifest
from ...loading.hub import inference_device, load_tokenizer
from ...loading.released import fetch, identify
from ...models.batching import equal_length_batches
from .released import BASE_MODEL, load_released_chexbert

MAX_LENGTH = 512


def clean_report(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().replace("\n", " ")).strip()


class CheXbertRunner:
    def __init__(self, model, tokenizer, batch_size: int = 32):
        import torch

        self.model, self.tokenizer = model.eval().to(inference_device()), tokenizer
        self.batch_size, self._torch = batch_size, torch

    @classmethod
    def from_component(cls, path: str, base_model: str | None = None, **kwargs) -> CheXbertRunner:
        """A radmetrics export, or the released chexbert.pth (`base_model`: where bert-base-uncased's config
        and vocabulary are, default the Hub id through the local cache)."""
        path = fetch(path)
        if identify("chexbert", path) == "released":
            return cls(*load_released_chexbert(path, base_model or BASE_MODEL), **kwargs)
        from .labeler import CheXbertLabeler

        directory, _ = load_manifest(path, "chexbert")
        return cls(CheXbertLabeler.from_pretrained(directory), load_tokenizer(directory, min_vocab=50), **kwargs)

    def encode(self, report: str) -> list[int]:
        ids = self.tokenizer(clean_report(report))["input_ids"]
        return ids[: MAX_LENGTH - 1] + [self.tokenizer.sep_token_id] if len(ids) > MAX_LENGTH else ids

    def labels_and_embeddings(self, reports: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(reports x 14 head classes: 0 blank 1 positive 2 negative 3 uncertain, reports x hidden [CLS] states).
        Each distinct report text is run once (report corpora and generations repeat reports word for word)."""
        from .labeler import argmax_per_head

        torch = self._torch
        distinct = list(dict.fromkeys(reports))
        encoded = [self.encode(r) for r in distinct]
        hidden = self.model.config.encoder.get("hidden_size")
        classes = np.zeros((len(distinct), len(self.model.heads)), dtype=int)
        embeddings = np.zeros((len(distinct), hidden), dtype=np.float32)
        with torch.no_grad():
            for batch in equal_length_batches([len(e) for e in encoded], self.batch_size):
                ids = torch.tensor([encoded[i] for i in batch], device=self.model.device)
                cls = self.model.cls_embedding(ids, torch.ones_like(ids))
                logits = torch.cat([head(cls) for head in self.model.heads], dim=-1)  # eval: dropout is identity
                classes[batch] = argmax_per_head(logits, self.model.config.classes_per_head).cpu().numpy()
                embeddings[batch] = cls.float().cpu().numpy()
        position = {report: i for i, report in enumerate(distinct)}
        rows = [position[r] for r in reports]
        return classes[rows], embeddings[rows]
