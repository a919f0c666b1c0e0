"""Load exported components (manifest-checked) and run them over report text.

- `RateNerTagger`: RaTE-NER IOB export -> per report a list of (entity text, type). Reports are split
  into sentences and words (the same splitter and word tokeniser the silver data uses); each word takes
  the tag of its first subword, which reads both subword-labelling conventions correctly.
- `CheXbertRunner`: CheXbert-style export -> 14 head classes per report and [CLS] embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _device():
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def decode_iob(words: list[str], tags: list[str]) -> list[tuple[str, str]]:
    """Word-level IOB -> entities; an I- tag that does not continue an entity of its type starts one."""
    entities, current, kind = [], [], None
    for word, tag in zip(words, tags):
        if tag.startswith("I-") and kind == tag[2:]:
            current.append(word)
            continue
        if current:
            entities.append((" ".join(current), kind))
        current, kind = ([word], tag[2:]) if tag != "O" else ([], None)
    if current:
        entities.append((" ".join(current), kind))
    return entities


class RateNerTagger:
    def __init__(self, path: str, batch_size: int = 32, max_length: int = 256):
        import torch
        from transformers import AutoModelForTokenClassification

        from .checkpoint import load_manifest
        from .models import load_tokenizer

        directory, self.manifest = load_manifest(path, "rate_ner_iob")
        self.labels = self.manifest["label_map"]["labels"]
        self.tokenizer = load_tokenizer(directory, min_vocab=50)
        self.model = AutoModelForTokenClassification.from_pretrained(directory).eval().to(_device())
        self.batch_size, self.max_length, self._torch = batch_size, max_length, torch

    def entities(self, reports: Sequence[str]) -> list[list[tuple[str, str]]]:
        from .sentences import sentences_with_owner

        sentences, owner = sentences_with_owner(reports)
        found: list[list[tuple[str, str]]] = [[] for _ in reports]
        for start in range(0, len(sentences), self.batch_size):
            batch = sentences[start:start + self.batch_size]
            encoded = self.tokenizer(batch, is_split_into_words=True, truncation=True, max_length=self.max_length,
                                     padding=True, return_tensors="pt")
            with self._torch.no_grad():
                predicted = self.model(**{k: v.to(self.model.device) for k, v in encoded.items()}).logits.argmax(-1).cpu()
            for i, words in enumerate(batch):
                tags, seen = ["O"] * len(words), set()
                for position, word in enumerate(encoded.word_ids(i)):
                    if word is not None and word not in seen:
                        seen.add(word)
                        tags[word] = self.labels[int(predicted[i, position])]
                found[owner[start + i]].extend(decode_iob(words, tags))
        return found


class CheXbertRunner:
    def __init__(self, path: str, batch_size: int = 32, max_length: int = 512):
        import torch

        from .checkpoint import load_manifest
        from .chexbert_model import CheXbertLabeler
        from .models import load_tokenizer

        directory, self.manifest = load_manifest(path, "chexbert")
        self.tokenizer = load_tokenizer(directory, min_vocab=50)
        self.model = CheXbertLabeler.from_pretrained(directory).eval().to(_device())
        self.batch_size, self.max_length, self._torch = batch_size, max_length, torch

    def _batches(self, reports: Sequence[str]):
        for start in range(0, len(reports), self.batch_size):
            encoded = self.tokenizer(list(reports[start:start + self.batch_size]), truncation=True, padding=True,
                                     max_length=self.max_length, return_tensors="pt")
            yield {k: v.to(self.model.device) for k, v in encoded.items()}

    def labels_and_embeddings(self, reports: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(reports x 14 head classes: 0 blank 1 positive 2 negative 3 uncertain, reports x hidden [CLS] states)."""
        from .chexbert_model import argmax_per_head

        classes, embeddings = [], []
        with self._torch.no_grad():
            for batch in self._batches(reports):
                cls = self.model.cls_embedding(batch["input_ids"], batch.get("attention_mask"), batch.get("token_type_ids"))
                logits = self._torch.cat([head(cls) for head in self.model.heads], dim=-1)  # eval: dropout is identity
                classes.append(argmax_per_head(logits, self.model.config.classes_per_head).cpu().numpy())
                embeddings.append(cls.float().cpu().numpy())
        return np.concatenate(classes), np.concatenate(embeddings)
