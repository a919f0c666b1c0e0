"""Span extractor inputs, batching and decoding, shared by training and inference, and the runner base
class that the RaTE-NER span tagger (metrics/ratescore) and the RadGraph extractor (metrics/radgraph) build on.

Sentences are lists of words (the silver data's word tokeniser). Each candidate span (start word, end
word, inclusive) maps to the first subword of its first word and the last subword of its last word;
spans cut off by truncation are not candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..loading.checkpoint import load_manifest
from ..loading.hub import load_tokenizer

INPUT_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def enumerate_spans(n_words: int, max_width: int) -> list[tuple[int, int]]:
    return [(s, e) for s in range(n_words) for e in range(s, min(n_words, s + max_width))]


def encode_span_inputs(tokenizer, sentences: Sequence[Sequence[str]], max_width: int, max_length: int) -> list[dict]:
    """Per sentence: the tokenizer's inputs, `spans` (word-level candidates) and their token positions."""
    encoded = tokenizer([list(s) for s in sentences], is_split_into_words=True, truncation=True, max_length=max_length)
    rows = []
    for i, words in enumerate(sentences):
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for position, word in enumerate(encoded.word_ids(i)):
            if word is not None:
                first.setdefault(word, position)
                last[word] = position
        spans = [(s, e) for s, e in enumerate_spans(len(words), max_width) if s in first and e in last]
        row = {k: encoded[k][i] for k in INPUT_KEYS if k in encoded}
        row.update(
            spans=spans,
            span_starts=[first[s] for s, _ in spans],
            span_ends=[last[e] for _, e in spans],
            span_widths=[e - s for s, e in spans],
        )
        rows.append(row)
    return rows


class SpanCollator:
    """Pads token inputs with the tokenizer and span fields to the batch maximum (labels with -100,
    entity indices with -1). Optional per-row fields: `span_labels`, `entity_index`, `relation_labels`
    (K x K, flattened row-major)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, rows: list[dict]) -> dict:
        import torch

        batch = dict(self.tokenizer.pad([{k: r[k] for k in INPUT_KEYS if k in r} for r in rows], return_tensors="pt"))
        width = max(1, max(len(r["span_starts"]) for r in rows))
        for key, fill in (("span_starts", 0), ("span_ends", 0), ("span_widths", 0), ("span_labels", -100)):
            if key in rows[0]:
                batch[key] = torch.tensor([list(r[key]) + [fill] * (width - len(r[key])) for r in rows])
        if "entity_index" in rows[0]:
            k = max(len(r["entity_index"]) for r in rows)
            batch["entity_index"] = torch.tensor(
                [list(r["entity_index"]) + [-1] * (k - len(r["entity_index"])) for r in rows], dtype=torch.long
            ).reshape(len(rows), k)
            relations = torch.full((len(rows), k, k), -100, dtype=torch.long)
            for i, r in enumerate(rows):
                n = len(r["entity_index"])
                if n:
                    relations[i, :n, :n] = torch.tensor(r["relation_labels"]).reshape(n, n)
            batch["relation_labels"] = relations
        return batch


def decode_entities(probabilities: np.ndarray, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Greedy decoding of one sentence: spans whose best class is not null, most confident first, keeping
    those that overlap no span already kept. Returns (start, end, class) sorted by start."""
    best = probabilities[: len(spans)].argmax(-1)
    order = sorted((i for i in range(len(spans)) if best[i] != 0), key=lambda i: -probabilities[i, best[i]])
    taken: set[int] = set()
    kept = []
    for i in order:
        s, e = spans[i]
        if taken.isdisjoint(range(s, e + 1)):
            taken.update(range(s, e + 1))
            kept.append((s, e, int(best[i])))
    return sorted(kept)


class SpanExtractorRunner:
    """A span extractor over word-tokenised sentences: per sentence its entities [start, end, label] and,
    for a model with a relation head, relations [s1, e1, s2, e2, label]. `from_export` loads a
    manifest-checked export of the subclass's component."""

    component = ""

    def __init__(self, model, tokenizer, batch_size: int = 32, max_length: int = 256):
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model, self.tokenizer = model.eval().to(device), tokenizer
        self.batch_size, self.max_length, self._torch = batch_size, max_length, torch

    @classmethod
    def from_export(cls, path: str, **kwargs):
        from .span import SpanExtractor

        directory, _ = load_manifest(path, cls.component)
        return cls(SpanExtractor.from_pretrained(directory), load_tokenizer(directory, min_vocab=50), **kwargs)

    def extract(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[list], list[list]]]:
        """Per sentence its entities and relations; each pair's relation is the argmax of its logits plus the model
        config's `relation_decision_offsets` (none when unset)."""
        config = self.model.config
        return [
            (
                entities,
                relations_from_logits(entities, pair_logits, config.relation_labels, config.relation_decision_offsets),
            )
            for entities, pair_logits in self.scored(sentences)
        ]

    def scored(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[list], np.ndarray | None]]:
        """Per sentence its decoded entities [start, end, label] and, for a model with a relation head and at least two
        entities, the relation logits of every ordered entity pair (K x K x relations), before any decision."""
        config = self.model.config
        collate = SpanCollator(self.tokenizer)
        results = []
        for start in range(0, len(sentences), self.batch_size):
            rows = encode_span_inputs(
                self.tokenizer, sentences[start : start + self.batch_size], config.max_span_width, self.max_length
            )
            batch = {k: v.to(self.model.device) for k, v in collate(rows).items()}
            with self._torch.no_grad():
                spans = self.model.span_representations(
                    *(batch.get(k) for k in (*INPUT_KEYS, "span_starts", "span_ends", "span_widths"))
                )
                probabilities = self.model.entity_head(spans).softmax(-1).float().cpu().numpy()
                for i, row in enumerate(rows):
                    kept = decode_entities(probabilities[i], row["spans"])
                    entities = [[s, e, config.entity_labels[c]] for s, e, c in kept]
                    pair_logits = None
                    if self.model.relation_head is not None and len(kept) > 1:
                        position = {span: n for n, span in enumerate(row["spans"])}
                        index = self._torch.tensor([[position[(s, e)] for s, e, _ in kept]], device=self.model.device)
                        pair_logits = self.model.relation_logits(spans[i : i + 1], index)[0].float().cpu().numpy()
                    results.append((entities, pair_logits))
        return results


def relations_from_logits(
    entities: Sequence[Sequence],
    pair_logits: np.ndarray | None,
    labels: Sequence[str],
    offsets: Sequence[float] | None = None,
) -> list[list]:
    """[s1, e1, s2, e2, label] for every ordered pair of distinct entities whose decided class (argmax of the logits
    plus `offsets`) is not null."""
    if pair_logits is None:
        return []
    pair_classes = (pair_logits + np.asarray(offsets) if offsets is not None else pair_logits).argmax(-1)
    return [
        [*entities[a][:2], *entities[b][:2], labels[pair_classes[a, b]]]
        for a in range(len(entities))
        for b in range(len(entities))
        if a != b and pair_classes[a, b] != 0
    ]
