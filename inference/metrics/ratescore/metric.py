"""RaTEScore (Zhao et al. 2024, section 2): RaTE-NER entities -> entity embeddings -> affinity-weighted
best matches in both directions -> harmonic mean; 0.5 when a side has no entities.

Options: `matrix` ("long" default, "short", or a tuned JSON from `meta-eval tune-ratescore`), `neg_weight`
(override; 0.3612 reproduces the reference code's hard-coded value), `encoder` (entity encoder; the
reference uses BioLORD-2023-C with [CLS] pooling, the default here is the bundled MiniLM with mean
pooling), `pooling`, `ner` ("iob" or "span": which RaTE-NER component tags entities).
"""

from __future__ import annotations

from ..base import Metric, MetricOutput


class RaTEScore(Metric):
    name = "ratescore"
    keys = ("ratescore",)
    higher_is_better = {"ratescore": True}
    reference = "RaTEScore (Zhao et al. 2024; MAGIC-AI4Med/RaTEScore utils.compute)"
    requires_components = ("rate_ner_iob|rate_ner_span",)

    def _tagger(self):
        """The IOB tagger when given (the reference's decoder is IOB), else the span model; option `ner`
        ("iob" or "span") picks one when both are given."""
        from .taggers import RateNerSpanTagger, RateNerTagger

        kind = self.options.get("ner") or ("iob" if "rate_ner_iob" in self.components else "span")
        if kind not in ("iob", "span"):
            raise ValueError(f"ratescore option ner={kind!r}: expected 'iob' or 'span'")
        if f"rate_ner_{kind}" not in self.components:
            raise KeyError(f"ratescore option ner={kind!r} needs the rate_ner_{kind} component")
        if kind == "iob":
            return RateNerTagger(self.components["rate_ner_iob"])
        return RateNerSpanTagger.from_export(self.components["rate_ner_span"])

    def compute(self, references, candidates):
        from .score import embed_entity_lists, load_affinity, pair_matches, score_from_matches

        tagger = self._tagger()
        ref_entities, cand_entities = tagger.entities(references), tagger.entities(candidates)
        embedded = embed_entity_lists(ref_entities + cand_entities, self.options.get("encoder", "default"),
                                      self.options.get("pooling", "mean"))
        refs, cands = embedded[: len(references)], embedded[len(references):]
        weights, neg_weight = load_affinity(self.options.get("matrix", "long"))
        neg_weight = self.options.get("neg_weight", neg_weight)
        scores = [score_from_matches(*pair_matches(r[0], r[1], c[0], c[1]), weights, neg_weight) for r, c in zip(refs, cands)]
        details = [{"reference_entities": r, "candidate_entities": c} for r, c in zip(ref_entities, cand_entities)]
        return MetricOutput({"ratescore": scores}, details=details)
