"""RaTEScore (Zhao et al. 2024, section 2): RaTE-NER entities -> entity embeddings -> affinity-weighted
best matches in both directions -> harmonic mean; 0.5 when a side has no entities.

Components: `rate_ner` (the authors' RaTE-NER-Deberta with BioLORD-2023-C, computed exactly as ratescore==0.6.0
does, see `released.py`; option `empty_reports`), or radmetrics' own `rate_ner_iob` / `rate_ner_span` exports.
Options: `matrix` ("long" default, "short", or a tuned JSON from `meta-eval tune-ratescore`), `neg_weight`
(override for radmetrics' exports), `encoder` (entity encoder: for `rate_ner` where BioLORD-2023-C is, default its
Hub id through the cache; for radmetrics' exports the default is the bundled MiniLM), `pooling` ("mean" or "cls",
radmetrics' exports), `ner` ("iob" or "span": which of radmetrics' exports tags entities), `other_type_weight` (the
weight of a type an export tags that the matrix lacks, entity_types.py; unset: such an export is refused).
"""

from __future__ import annotations

from ..base import Metric, MetricOutput, Option, OptionError
from ..display import entity_display
from .entity_types import check_export_types, matrix_types, with_other_types
from .released import RaTEScorePipeline
from .score import embed_entity_lists, load_affinity, pair_matches, score_from_matches
from .taggers import RateNerSpanTagger, RateNerTagger


class RaTEScore(Metric):
    name = "ratescore"
    runs_encoder = True
    options = {
        "ner": Option(
            None,
            True,
            "iob or span: which of radmetrics' exports tags entities (default: iob when given)",
            type=str,
            choices=("iob", "span"),
        ),
        "encoder": Option(
            None,
            True,
            "entity encoder (default: BioLORD-2023-C for rate_ner, the bundled MiniLM for exports)",
            True,
            type=str,
        ),
        "pooling": Option(
            "mean",
            True,
            "mean or cls pooling of entity embeddings (radmetrics' exports)",
            type=str,
            choices=("mean", "cls"),
        ),
        "matrix": Option(
            "long",
            True,
            "affinity matrix: long, short, or a JSON from meta-eval tune-ratescore",
            type=str,
            choices=("long", "short"),
            file=True,
        ),
        "neg_weight": Option(None, True, "weight of negated entities (default: the matrix's)", type=float),
        "other_type_weight": Option(
            None,
            True,
            "weight of every pair with an entity type the matrix lacks (a user's label set; unset: refused)",
            type=float,
            minimum=0.0,
            maximum=1.0,
        ),
        "empty_reports": Option(
            "pairwise",
            True,
            "how a report with no entities scores with the released models: pairwise or reference (ratescore 0.6.0)",
            type=str,
            choices=("pairwise", "reference"),
        ),
    }
    keys = ("ratescore",)
    higher_is_better = {"ratescore": True}
    reference = "RaTEScore (Zhao et al. 2024; ratescore==0.6.0 compute_score with the released models)"
    citation = """@inproceedings{zhao2024ratescore, title={RaTEScore: A Metric for Radiology Report Generation},
  author={Zhao, Weike and Wu, Chaoyi and Zhang, Xiaoman and Zhang, Ya and Wang, Yanfeng and Xie, Weidi}, \
booktitle={EMNLP}, year={2024}}"""

    @classmethod
    def display_detail(cls, detail):
        def entities(items):
            return [(str(e[0]), str(e[1])) if isinstance(e, (list, tuple)) else (str(e), "") for e in items or []]

        return entity_display(entities(detail.get("reference_entities")), entities(detail.get("candidate_entities")))

    requires_components = ("rate_ner|rate_ner_iob|rate_ner_span",)

    @classmethod
    def check_setup(cls, options, components, endpoint):
        kind = options["ner"]
        if kind is not None and f"rate_ner_{kind}" not in components:
            raise OptionError(
                f"metric ratescore option ner={kind!r} needs the rate_ner_{kind} component: pass its export with "
                "--components, or leave ner unset"
            )
        check_export_types(options, components)

    def _tagger(self):
        """The IOB tagger when given (the reference's decoder is IOB), else the span model; option `ner`
        ("iob" or "span") picks one when both are given."""
        kind = self.options["ner"] or ("iob" if "rate_ner_iob" in self.components else "span")
        if kind == "iob":
            return RateNerTagger(self.components["rate_ner_iob"])
        return RateNerSpanTagger.from_export(self.components["rate_ner_span"])

    def _released(self, references, candidates) -> MetricOutput:
        pipeline = self.loaded(
            "pipeline",
            lambda: RaTEScorePipeline.from_component(self.components["rate_ner"], self.options["encoder"]),
            self.components["rate_ner"],
            self.options["encoder"],
        )
        scores, ref_entities, cand_entities = pipeline.scores(
            references, candidates, self.options["matrix"], self.options["empty_reports"]
        )
        details = [{"reference_entities": r, "candidate_entities": c} for r, c in zip(ref_entities, cand_entities)]
        return MetricOutput({"ratescore": [float("nan") if s is None else s for s in scores]}, details=details)

    def compute(self, references, candidates):
        if "rate_ner" in self.components and self.options["ner"] is None:
            return self._released(references, candidates)
        tagger = self.loaded("tagger", self._tagger, sorted(self.components.items()), self.options["ner"])
        ref_entities, cand_entities = tagger.entities(references), tagger.entities(candidates)
        embedded = embed_entity_lists(
            ref_entities + cand_entities, self.options["encoder"] or "default", self.options["pooling"]
        )
        refs, cands = embedded[: len(references)], embedded[len(references) :]
        weights, neg_weight = load_affinity(self.options["matrix"])
        found = {kind for entities in ref_entities + cand_entities for _, kind in entities}
        weights = with_other_types(weights, found, self.options["other_type_weight"], self.options["matrix"])
        neg_weight = neg_weight if self.options["neg_weight"] is None else self.options["neg_weight"]
        types = matrix_types(weights)
        scores = [
            score_from_matches(*pair_matches(r[0], r[1], c[0], c[1], types), weights, neg_weight)
            for r, c in zip(refs, cands)
        ]
        details = [{"reference_entities": r, "candidate_entities": c} for r, c in zip(ref_entities, cand_entities)]
        return MetricOutput({"ratescore": scores}, details=details)
