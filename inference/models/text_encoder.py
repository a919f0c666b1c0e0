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

# At most this many (rows x tokens x tokens) per forward: each layer's attention scores are rows x heads x tokens x
# tokens floats, so a batch of 64 texts padded to 256 tokens held 200 MB of them, twice (scores and softmax). Texts
# sorted by length (the findings extractor's) put a chunk's longest texts in one batch, so a run's peak memory was set
# by its longest batch and grew with the number of pairs (more pairs, longer outliers). 64 x 128 x 128: a batch up to
# 128 tokens runs whole, as before; a longer one runs in slices of the same padded length.
ATTENTION_CELLS = 64 * 128 * 128


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
                chunks.extend(self.pooled_slices(batch))
        return np.concatenate(chunks)

    def pooled_slices(self, batch) -> list[np.ndarray]:
        """The normalised embeddings of one tokenized batch, run `ATTENTION_CELLS` at a time: slices of rows padded to
        the batch's own length, so each row's computation (its shapes, its padding) is the one the whole batch gives."""
        import torch

        rows, length = batch["input_ids"].shape
        step = max(1, min(rows, ATTENTION_CELLS // (length * length)))
        pooled_rows = []
        for start in range(0, rows, step):
            part = {name: tensor[start : start + step] for name, tensor in batch.items()}
            hidden = self.model(**part).last_hidden_state
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = part["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            pooled_rows.append(torch.nn.functional.normalize(pooled.float(), dim=-1).cpu().numpy())
        return pooled_rows
