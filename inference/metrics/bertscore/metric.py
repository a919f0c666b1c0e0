"""BERTScore F1 through the `bert-score` package (Zhang et al. 2020).

Options: `model` (a local directory, a Hub id, or "default" for the bundled all-MiniLM-L6-v2), `num_layers`,
`idf` (inverse document frequencies from the references, as CXR-Report-Metric does), and
`rescale_with_baseline`. Baselines come from the bert-score package's files for the models it knows
(RadCliQ uses distilroberta-base, layer 5, rescaled); for the bundled default encoder radmetrics ships
its own baseline, made by `python -m radmetrics.inference.metrics.bertscore.baseline` the way
bert-score made its own (mean P/R/F per layer over unrelated sentence pairs).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ..base import Metric, MetricOutput

DEFAULT_LAYER = 5  # of 6: the depth bert-score recommends for 6-layer distilled models (distilroberta-base: 5)
DEFAULT_BASELINE = Path(str(files("radmetrics.inference").joinpath("resources", "bertscore_baseline_all-MiniLM-L6-v2.tsv")))


def _is_default(model: str) -> bool:
    from ...loading.hub import DEFAULT_ENCODER_ALIASES

    return model in DEFAULT_ENCODER_ALIASES


class BertScore(Metric):
    name = "bertscore"
    option_names = ("model", "rescale_with_baseline", "baseline_path", "num_layers", "idf", "batch_size", "device")
    keys = ("bertscore",)
    higher_is_better = {"bertscore": True}
    reference = "BERTScore F1 (bert-score package; baseline rescaling; RadCliQ: distilroberta-base layer 5)"

    def scorer(self, references):
        from bert_score import BERTScorer

        from ...loading.hub import resolve_model_path

        model = self.options.get("model", "default")
        rescale = self.options.get("rescale_with_baseline", True)
        baseline = self.options.get("baseline_path")
        if rescale and baseline is None and _is_default(model):
            baseline = str(DEFAULT_BASELINE)
        return BERTScorer(
            model_type=resolve_model_path(model),
            num_layers=self.options.get("num_layers", DEFAULT_LAYER if _is_default(model) else None),
            idf=self.options.get("idf", False),
            idf_sents=list(references) if self.options.get("idf", False) else None,
            rescale_with_baseline=rescale,
            baseline_path=baseline,
            lang="en",
            batch_size=self.options.get("batch_size", 64),
            device=self.options.get("device"),
        )

    def compute(self, references, candidates):
        # with idf the weights come from this call's references; without, one scorer serves every call
        scorer = self.scorer(references) if self.options.get("idf") else self.loaded("scorer", lambda: self.scorer(references))
        _, _, f1 = scorer.score(list(candidates), list(references), verbose=False)
        return MetricOutput({"bertscore": [float(x) for x in f1]})
