"""RaTE-NER taggers over report text: per report a list of (entity text, type).

- `RateNerTagger`: RaTE-NER IOB export. Reports are split into sentences and words (the same splitter and
  word tokeniser the silver data uses); each word takes the tag of its first subword, which reads both
  subword-labelling conventions correctly.
- `RateNerSpanTagger`: RaTE-NER span (PURE) export, through the shared span extractor runner.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...loading.checkpoint import load_manifest
from ...loading.hub import inference_device, load_tokenizer
from ...models.span_extraction import SpanExtractorRunner
from ...text.sentences import sentences_with_owner


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

        directory, self.manifest = load_manifest(path, "rate_ner_iob")
        self.labels = self.manifest["label_map"]["labels"]
        self.tokenizer = load_tokenizer(directory, min_vocab=50)
        self.model = AutoModelForTokenClassification.from_pretrained(directory).eval().to(inference_device())
        self.batch_size, self.max_length, self._torch = batch_size, max_length, torch

    def entities(self, reports: Sequence[str]) -> list[list[tuple[str, str]]]:
        sentences, owner = sentences_with_owner(reports)
        found: list[list[tuple[str, str]]] = [[] for _ in reports]
        for start in range(0, len(sentences), self.batch_size):
            batch = sentences[start : start + self.batch_size]
            encoded = self.tokenizer(
                batch,
                is_split_into_words=True,
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            with self._torch.no_grad():
                predicted = (
                    self.model(**{k: v.to(self.model.device) for k, v in encoded.items()}).logits.argmax(-1).cpu()
                )
            for i, words in enumerate(batch):
                tags, seen = ["O"] * len(words), set()
                for position, word in enumerate(encoded.word_ids(i)):
                    if word is not None and word not in seen:
                        seen.add(word)
                        tags[word] = self.labels[int(predicted[i, position])]
                found[owner[start + i]].extend(decode_iob(words, tags))
        return found


class RateNerSpanTagger(SpanExtractorRunner):
    """RaTE-NER span extractor -> per report a list of (entity text, type), like `RateNerTagger`."""

    component = "rate_ner_span"

    def entities(self, reports: Sequence[str]) -> list[list[tuple[str, str]]]:
        sentences, owner = sentences_with_owner(reports)
        found: list[list[tuple[str, str]]] = [[] for _ in reports]
        for words, n, (entities, _) in zip(sentences, owner, self.extract(sentences)):
            found[n].extend((" ".join(words[s : e + 1]), label) for s, e, label in entities)
        return found
