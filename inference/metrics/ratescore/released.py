"""RaTEScore with the authors' released models, as ratescore==0.6.0 computes it (`RaTEScore.compute_score`).

- sentences: RuSH, as medspacy's PyRuSH sentencizer splits them (`rush.py`);
- NER: `Angelakeke/RaTE-NER-Deberta`, one sentence at a time in the reference (here each distinct sentence once, and
  sentences of equal token length share a batch, which gives the same predictions), labels read from the model's
  `id2label`;
- entities: the reference's `post_process` over the sentence's tokens, [CLS]/[SEP] skipped, each B-/I- run
  decided by the label of the next token (the one on [SEP] included); an entity's text is
  `convert_tokens_to_string` of its tokens, its type the B- label's;
- embeddings: `FremyCompany/BioLORD-2023-C`, all entities of one report in one padded batch (max 30 tokens),
  the first token's last hidden state (here each distinct list once: a report repeated word for word is embedded once,
  in the same batch, so its vectors are the reference's to the bit; a batch of distinct texts instead would round
  differently and change which of two exactly tied matches `torch.topk` picks);
- score: for each entity its best cosine match on the other side (`torch.topk`, whose tie-breaking decides the
  matched type for repeated entity texts), weighted by the affinity matrix and the negation penalty, both
  directions, harmonic mean; 0.5 when either side has no entity.

The reference's bug: a report with no usable sentence (empty, or only pieces under 3 characters) yields no
entry at all, so every later pair is scored against the wrong partner and the output is shorter than the input.
Option `empty_reports="reference"` reproduces that (positions past the shortened output are not scored); the
default scores such a report as one without entities (0.5), pair by pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...loading.checkpoint import load_manifest
from ...loading.hub import inference_device, load_pretrained, load_tokenizer
from ...loading.released import fetch, identify, resolve_model_dir
from ...models.batching import equal_length_batches
from .rush import rush_splitter
from .score import NEGATION_CLASHES, load_affinity

ENCODER = "FremyCompany/BioLORD-2023-C"
EMPTY_REPORT_POLICIES = ("pairwise", "reference")


def decode_entities(tokens: list[str], labels: list[str]) -> list[tuple[int, int, str]]:
    """ratescore 0.6.0 `post_process` spans (start, end, type) over one sentence's tokens and predicted labels."""
    spans = []
    start = end = kind = None
    for i, (token, label) in enumerate(zip(tokens, labels[: len(tokens)])):
        if token in ("[CLS]", "[SEP]") or label == "O" or i >= len(labels) - 1:
            continue
        following = labels[i + 1]
        if label.startswith("B-") and following.startswith("I-"):
            start, kind = i, label[2:]
        elif label.startswith("B-") and following.startswith("B-"):
            spans.append((i, i, label[2:]))
            start, end, kind = i, i, label[2:]
        elif label.startswith("B-") and following.startswith("O"):
            spans.append((i, i, label[2:]))
            start = end = kind = None
        elif label.startswith("I-") and following.startswith("B-"):
            end = i
            if start is not None:
                spans.append((start, i, kind))
            start, kind = i, label[2:]
        elif label.startswith("I-") and following.startswith("O"):
            end = i
            if start is not None:
                spans.append((start, i, kind))
            start = end = kind = None
    if start is not None and end is None:  # an entity still open at the end; dropped once `end` was ever set
        spans.append((start, len(tokens) - 2, kind))
    return spans


class RaTEScorePipeline:
    def __init__(self, ner_model, ner_tokenizer, encoder_model, encoder_tokenizer, batch_size: int = 32):
        import torch

        device = inference_device()
        self.ner_model, self.ner_tokenizer = ner_model.eval().to(device), ner_tokenizer
        self.encoder_model, self.encoder_tokenizer = encoder_model.eval().to(device), encoder_tokenizer
        self.labels = {int(i): label for i, label in ner_model.config.id2label.items()}
        self.batch_size, self._torch = batch_size, torch

    @classmethod
    def from_component(cls, path: str, encoder: str | None = None, **kwargs) -> RaTEScorePipeline:
        """The released RaTE-NER folder (or its catalogue name) with BioLORD (`encoder`: a folder or Hub id),
        or a converted export holding both (`ner/`, `encoder/`)."""
        from transformers import AutoModel, AutoModelForTokenClassification

        path = fetch(path)
        if identify("rate_ner", path) == "export":
            directory, _ = load_manifest(path, "ratescore_pipeline")
            ner, embedder = directory / "ner", directory / "encoder"
        else:
            ner, embedder = path, resolve_model_dir(encoder or ENCODER, "RaTEScore's entity embeddings")
        return cls(
            load_pretrained(AutoModelForTokenClassification, ner),
            load_tokenizer(ner, min_vocab=50),
            load_pretrained(AutoModel, embedder),
            load_tokenizer(embedder, min_vocab=50),
            **kwargs,
        )

    def entities(self, reports: Sequence[str]) -> list[list[tuple[str, str]] | None]:
        """Per report its (entity text, type) list, or None for a report with no usable sentence."""
        splitter, torch = rush_splitter(), self._torch
        # RuSH is pure Python, a large part of the call on a GPU: each distinct report (they repeat) is split once
        by_report = {report: splitter.sentences(report) for report in dict.fromkeys(reports)}
        sentences = [by_report[report] for report in reports]
        distinct = list(dict.fromkeys(s for report in sentences for s in report))  # reports repeat their sentences
        encoded = [self.ner_tokenizer(s, max_length=512, truncation=True) for s in distinct]
        per_sentence: dict[str, list[tuple[str, str]]] = {}
        with torch.inference_mode():
            for batch in equal_length_batches([len(e["input_ids"]) for e in encoded], self.batch_size):
                inputs = {
                    key: torch.tensor([encoded[i][key] for i in batch], device=self.ner_model.device)
                    for key in encoded[batch[0]].keys()
                }
                for i, row in zip(batch, self.ner_model(**inputs).logits.argmax(-1).tolist()):
                    tokens = self.ner_tokenizer.convert_ids_to_tokens(encoded[i]["input_ids"])
                    per_sentence[distinct[i]] = [
                        (self.ner_tokenizer.convert_tokens_to_string(tokens[start : end + 1]), kind)
                        for start, end, kind in decode_entities(tokens, [self.labels[label] for label in row])
                    ]
        return [[e for s in report for e in per_sentence[s]] if report else None for report in sentences]

    def embed(self, texts: list[str]):
        """One report side's entities in one padded batch: the first token's last hidden state (float32, CPU)."""
        torch = self._torch
        if not texts:
            return torch.zeros(0)
        encoded = self.encoder_tokenizer(texts, truncation=True, padding=True, return_tensors="pt", max_length=30)
        with torch.inference_mode():
            states = self.encoder_model(**encoded.to(self.encoder_model.device)).last_hidden_state
        return states[:, 0, :].float().cpu()

    def directional(self, source, source_types, target, target_types, weights, neg_weight: float) -> float:
        """ratescore 0.6.0 `compute`: best matches by `torch.topk` on normalised embeddings, weighted mean."""
        torch = self._torch
        source = torch.nn.functional.normalize(source, p=2, dim=1)
        target = torch.nn.functional.normalize(target, p=2, dim=1)
        numerator = denominator = 0.0
        for row, kind in zip(source, source_types):
            value, index = torch.topk(torch.matmul(target, row), 1, largest=True)
            pair = (kind, target_types[int(index[0])])
            numerator += float(value[0]) * weights[pair] * (neg_weight if pair in NEGATION_CLASHES else 1)
            denominator += weights[pair]
        return numerator / denominator if denominator else 0.0

    def score_pairs(self, ref_entities, cand_entities, matrix: str = "long") -> list[float]:
        weights, neg_weight = load_affinity(matrix)
        embedded: dict[tuple[str, ...], object] = {}

        def side(
            entities,
        ):  # a repeated report side (same entity texts) is embedded once, batched as the reference does
            texts = tuple(text for text, _ in entities)
            if texts not in embedded:
                embedded[texts] = self.embed(list(texts))
            return embedded[texts]

        scores = []
        for ref, cand in zip(ref_entities, cand_entities):
            if not ref or not cand:
                scores.append(0.5)
                continue
            ref_emb, cand_emb = side(ref), side(cand)
            precision = self.directional(
                ref_emb, [k for _, k in ref], cand_emb, [k for _, k in cand], weights, neg_weight
            )
            recall = self.directional(
                cand_emb, [k for _, k in cand], ref_emb, [k for _, k in ref], weights, neg_weight
            )
            scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
        return scores

    def scores(
        self,
        references: Sequence[str],
        candidates: Sequence[str],
        matrix: str = "long",
        empty_reports: str = "pairwise",
    ) -> tuple[list[float], list, list]:
        """(per-pair scores, None where not scored; reference entities; candidate entities)."""
        if empty_reports not in EMPTY_REPORT_POLICIES:
            raise ValueError(
                f"ratescore option empty_reports={empty_reports!r}: expected one of {EMPTY_REPORT_POLICIES}"
            )
        found = self.entities([*references, *candidates])  # one pass: shared sentences run once
        ref_entities, cand_entities = found[: len(references)], found[len(references) :]
        if empty_reports == "reference":
            kept_ref = [e for e in ref_entities if e is not None]
            kept_cand = [e for e in cand_entities if e is not None]
            scores = self.score_pairs(kept_ref, kept_cand, matrix)
            return scores + [None] * (len(references) - len(scores)), ref_entities, cand_entities
        ref_entities = [e or [] for e in ref_entities]
        cand_entities = [e or [] for e in cand_entities]
        return self.score_pairs(ref_entities, cand_entities, matrix), ref_entities, cand_entities
