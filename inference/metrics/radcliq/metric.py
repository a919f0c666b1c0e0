"""RadCliQ v0 and v1 (Yu et al. 2023) per report pair from the sub-scores computed in the same run:
radgraph_radcliq, bertscore, chexbert_similarity and bleu2 (see `composite.py`).
Lower is better; the aggregate is the mean of per-sample values. The published constants were fit on
distilroberta-base BERTScore and the original CheXbert/RadGraph models: values from other sub-score
models are not comparable to published ones. Option `constants`: a JSON written by `meta-eval fit-radcliq`, which
replaces the published RadCliQ-v1 constants (radcliq_v1; v0 keeps the published unconstrained fit).

By default the features are the same run's `radgraph_radcliq` and `bertscore` keys. Options `radgraph_model` (with
`radgraph_base_model`, as the radgraph metric's `base_model`) and `bertscore_model` give RadCliQ models of its own for
those two features, as RadEval 2.2.1 does: its `radgraph` key is RadGraph-XL and its `bertscore` key
distilbert-base-uncased, while its RadCliQ-v1 uses the original RadGraph and distilroberta-base (CXR-Report-Metric's
setting: layer 5, idf over the references, rescaled). `radgraph_model=radgraph bertscore_model=distilroberta-base`
beside `radgraph=radgraph-xl` computes RadEval's keys in one process; each model is loaded once per process, shared
with any metric that uses it. With an option set, the run does not compute the metric it replaces (nor needs a
`radgraph` component, for `radgraph_model`) unless that metric is asked for itself. Option `precision` ("bf16") runs
those own models under bfloat16 autocast, as the encoder metrics' option does; it is refused without them.
"""

from __future__ import annotations

from ..base import Metric, MetricOutput, Option, OptionError
from ..bertscore.metric import BertScore
from ..radgraph.metric import RadGraph
from .composite import FEATURES, load_constants, radcliq_v0, radcliq_v1

# CXR-Report-Metric's BERTScorer (bert-score's default layer for distilroberta-base), on `bertscore_model`
RADCLIQ_BERTSCORE = {"num_layers": 5, "idf": True, "rescale_with_baseline": True}


class RadCliQ(Metric):
    name = "radcliq"
    options = {
        "constants": Option(
            None,
            True,
            "RadCliQ-v1 constants refitted by meta-eval fit-radcliq, a JSON file (default: the published)",
            type=str,
            file=True,
        ),
        "radgraph_model": Option(
            None, True, "a RadGraph model of RadCliQ's own for its RadGraph feature", True, type=str
        ),
        "radgraph_base_model": Option(None, False, "where radgraph_model's config and tokenizer are", type=str),
        "bertscore_model": Option(
            None, True, "a BERTScore model of RadCliQ's own (layer 5, idf, rescaled)", True, type=str
        ),
    }
    keys = ("radcliq_v0", "radcliq_v1")
    higher_is_better = {"radcliq_v0": False, "radcliq_v1": False}
    reference = "RadCliQ (Yu et al. 2023; rajpurkarlab/CXR-Report-Metric constants)"
    citation = """@article{yu2023evaluating, title={Evaluating progress in automatic chest X-ray radiology report \
generation},
  author={Yu, Feiyang and others}, journal={Patterns}, volume={4}, number={9}, year={2023}}"""
    requires_components = ("radgraph", "chexbert")
    depends_on = ("radgraph", "bertscore", "chexbert", "bleu2")
    replaced_by_options = (("radgraph_model", "radgraph"), ("bertscore_model", "bertscore"))
    runs_encoder = True  # its own models only (radgraph_model, bertscore_model): option `precision` applies to them

    @classmethod
    def check_setup(cls, options, components, endpoint):
        if options["precision"] != "fp32" and not (options["radgraph_model"] or options["bertscore_model"]):
            raise OptionError(
                "metric radcliq option precision applies to its own models (radgraph_model, bertscore_model), which "
                "are not set: set precision on the metrics whose keys it combines (radgraph, bertscore, chexbert)"
            )
        if options["radgraph_base_model"] and not options["radgraph_model"]:
            raise OptionError(
                "metric radcliq option radgraph_base_model is the base model of radgraph_model: set radgraph_model too"
            )

    def values_depend_on_corpus(self) -> bool:
        return bool(self.options["bertscore_model"])  # its own BERTScore takes idf weights from the call's references

    def compute(self, references, candidates):
        params = load_constants(self.options["constants"]) if self.options["constants"] else None
        own = self.own_features(references, candidates)
        features = [own[key] if key in own else self.upstream_values(key) for key in FEATURES]
        return MetricOutput(
            {
                "radcliq_v0": [float(v) for v in radcliq_v0(*features)],
                "radcliq_v1": [float(v) for v in radcliq_v1(*features, params=params)],
            }
        )

    def own_features(self, references, candidates) -> dict:
        """The features that RadCliQ's own models compute (options radgraph_model, bertscore_model)."""
        features = {}
        if self.options["radgraph_model"]:
            radgraph = RadGraph(
                {"radgraph": self.options["radgraph_model"]}, base_model=self.options["radgraph_base_model"]
            )
            features["radgraph_radcliq"] = radgraph(references, candidates).per_sample["radgraph_radcliq"]
        if self.options["bertscore_model"]:
            bertscore = BertScore(model=self.options["bertscore_model"], **RADCLIQ_BERTSCORE)
            features["bertscore"] = bertscore(references, candidates).per_sample["bertscore"]
        return features
