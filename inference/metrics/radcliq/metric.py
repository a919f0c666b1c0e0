"""RadCliQ v0 and v1 (Yu et al. 2023) per report pair from the sub-scores computed in the same run:
radgraph_radcliq, bertscore, chexbert_similarity and bleu2 (see `composite.py`).
Lower is better; the aggregate is the mean of per-sample values. The published constants were fit on
distilroberta-base BERTScore and the original CheXbert/RadGraph models: values from other sub-score
models are not comparable to published ones. Option `constants`: a JSON written by `meta-eval fit-radcliq`, which
replaces the published RadCliQ-v1 constants (radcliq_v1; v0 keeps the published unconstrained fit).
"""

from __future__ import annotations

from ..base import Metric, MetricOutput


class RadCliQ(Metric):
    name = "radcliq"
    option_names = ("constants",)
    keys = ("radcliq_v0", "radcliq_v1")
    higher_is_better = {"radcliq_v0": False, "radcliq_v1": False}
    reference = "RadCliQ (Yu et al. 2023; rajpurkarlab/CXR-Report-Metric constants)"
    requires_components = ("radgraph", "chexbert")

    def compute(self, references, candidates):
        from ...registry import key_owner
        from .composite import FEATURES, load_constants, radcliq_v0, radcliq_v1

        owners = key_owner()
        params = load_constants(self.options["constants"]) if self.options.get("constants") else None
        features = [self.upstream[owners[key]].per_sample[key] for key in FEATURES]
        return MetricOutput({"radcliq_v0": [float(v) for v in radcliq_v0(*features)],
                             "radcliq_v1": [float(v) for v in radcliq_v1(*features, params=params)]})
