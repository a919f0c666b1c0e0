"""Batched text embeddings from any local or Hub encoder (the bundled MiniLM by default).

`pooling="mean"` averages the last hidden states over non-padding tokens (sentence-transformers'
convention, right for all-MiniLM-L6-v2); `pooling="cls"` takes the first token, as RaTEScore does
with BioLORD and CheXbert with its [CLS] state. Embeddings come back L2-normalised.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..loading.hub import load_pretrained, load_tokenizer

POOLINGS = ("mean", "cls")


class TextEncoder:
    def __init__(
        self, name_or_path: str = "default", pooling: str = "mean", max_length: int = 256, device: str | None = None
    ):
        import torch
        from transformers import AutoModel

        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {POOLINGS}")
        self.pooling, self.max_length = pooling, max_length
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = load_tokenizer(name_or_path)
        self.model = load_pretrained(AutoModel, name_or_path).eval().to(self.device)

    def encode(
        self, texts: Sequence[str], batch_size: int = 64, progress: bool = False, desc: str = "embedding"
    ) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.model.config.hidden_size), dtype=np.float32)
        starts = range(0, len(texts), batch_size)
        if progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc=desc, unit="batch")
        chunks = []
        with torch.no_grad():
            for start in starts:
                batch = self.tokenizer(
                    list(texts[start : start + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.model(**batch).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                chunks.append(torch.nn.functional.normalize(pooled.float(), dim=-1).cpu().numpy())
        return np.concatenate(chunks)
