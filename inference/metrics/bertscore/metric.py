"""BERTScore F1 through the `bert-score` package (Zhang et al. 2020).

Options: `model` (a local directory, a Hub id, or "default" for the bundled all-MiniLM-L6-v2), `num_layers`,
`idf` (inverse document frequencies from the references, as CXR-Report-Metric does), and
`rescale_with_baseline`. Baselines come from the bert-score package's files for the models it knows
(RadCliQ uses distilroberta-base, layer 5, idf, rescaled); for the bundled default encoder radmetrics ships
its own baseline, made by `python -m radmetrics.data_builders.bertscore_baseline` the way
bert-score made its own (mean P/R/F per layer over unrelated sentence pairs). The encoder is loaded once per process;
with `idf` only the weights are recomputed per call. RoBERTa-family tokenizers are given the prefix space that
bert-score asks for and transformers 5 ignores (`with_prefix_space`).
"""

from __future__ import annotations

import warnings
from importlib.resources import files
from pathlib import Path

from ...loading.hub import DEFAULT_ENCODER_ALIASES, resolve_model_path
from ..base import Metric, MetricOutput, Option

DEFAULT_LAYER = 5  # of 6: the depth bert-score recommends for 6-layer distilled models (distilroberta-base: 5)
DEFAULT_BASELINE = Path(
    str(files("radmetrics.inference").joinpath("resources", "bertscore_baseline_all-MiniLM-L6-v2.tsv"))
)


def _is_default(model: str) -> bool:
    return model in DEFAULT_ENCODER_ALIASES


class BertScore(Metric):
    name = "bertscore"
    runs_encoder = True
    options = {
        "model": Option(
            "default", True, "a local directory, a Hub id, or default (the bundled all-MiniLM-L6-v2)", True, type=str
        ),
        "rescale_with_baseline": Option(True, True, "rescale F1 with the model's baseline", type=bool),
        "baseline_path": Option(
            None,
            True,
            "a baseline TSV (default: bert-score's for its models, radmetrics' for MiniLM)",
            type=str,
            file=True,
        ),
        "num_layers": Option(
            None,
            True,
            f"the layer whose states are compared (default: {DEFAULT_LAYER} for MiniLM, "
            "else bert-score's for the model)",
            type=int,
            minimum=1,
        ),
        "idf": Option(False, True, "idf weights from the call's references, as CXR-Report-Metric", type=bool),
        "batch_size": Option(64, False, "sentences per forward", type=int, minimum=1),
        "device": Option(None, False, "torch device, e.g. cpu or cuda:1 (default: bert-score's choice)", type=str),
    }
    keys = ("bertscore",)
    higher_is_better = {"bertscore": True}
    reference = "BERTScore F1 (bert-score package; baseline rescaling; RadCliQ: distilroberta-base layer 5)"
    citation = """@inproceedings{zhang2020bertscore, title={BERTScore: Evaluating Text Generation with BERT},
  author={Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav}, \
booktitle={ICLR}, year={2020}}"""

    def scorer(self):
        from bert_score import BERTScorer

        model = self.options["model"]
        rescale = self.options["rescale_with_baseline"]
        baseline = self.options["baseline_path"]
        if rescale and baseline is None and _is_default(model):
            baseline = str(DEFAULT_BASELINE)
        return with_prefix_space(
            BERTScorer(
                model_type=resolve_model_path(model),
                num_layers=self.options["num_layers"] or (DEFAULT_LAYER if _is_default(model) else None),
                idf=self.options["idf"],
                rescale_with_baseline=rescale,
                baseline_path=baseline,
                lang="en",
                batch_size=self.options["batch_size"],
                device=self.options["device"],
            )
        )

    def values_depend_on_corpus(self) -> bool:
        return bool(self.options["idf"])  # idf weights from the call's references

    def compute(self, references, candidates):
        scorer = self.loaded(
            "scorer", self.scorer, sorted((k, v) for k, v in self.options.items() if k not in self.RUN_OPTIONS)
        )
        if self.options["idf"]:
            # idf weights from this call's references, as CXR-Report-Metric computes them, on the model loaded once
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Overwriting the previous importance weights")
                scorer.compute_idf(list(references))
        values = [empty_candidate_f1(scorer)] * len(candidates)
        kept = [i for i, candidate in enumerate(candidates) if candidate.strip()]
        if kept:
            _, _, f1 = scorer.score(
                [candidates[i] for i in kept],
                [references[i] for i in kept],
                verbose=False,
                batch_size=scorer.batch_size,
            )
            for i, value in zip(kept, f1):
                values[i] = float(value)
        return MetricOutput({"bertscore": values})


def with_prefix_space(scorer):
    """bert-score encodes with RoBERTa and GPT-2 tokenizers as `encode(sentence, add_prefix_space=True)`
    (bert_score/utils.py `sent_encode`), so the first word of a sentence is the same token as anywhere else ("ĠHeart").
    transformers 5 ignores that argument: the first word becomes "Heart", a different token from the one bert-score's
    baselines and CXR-Report-Metric's RadCliQ (distilroberta-base) were computed with. Such a tokenizer is loaded again
    with the prefix space set, as RadEval's vendored bert-score does; other tokenizers (DeBERTa's too, though it has
    the attribute) are left as they are, as bert-score leaves them."""
    from transformers import AutoTokenizer, GPT2Tokenizer, RobertaTokenizer

    tokenizer = scorer._tokenizer
    if (
        isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer))
        and getattr(tokenizer, "add_prefix_space", None) is False
    ):
        scorer._tokenizer = AutoTokenizer.from_pretrained(
            scorer.model_type, use_fast=scorer.use_fast_tokenizer, add_prefix_space=True
        )
    return scorer


def empty_candidate_f1(scorer) -> float:
    """bert-score's value for an empty (or whitespace-only) candidate: raw F1 0 ("Empty candidate sentence detected;
    setting raw BERTscores to 0", bert_score/utils.py), then the baseline rescaling. bert-score reaches that value
    through `build_inputs_with_special_tokens`, which transformers 5 tokenizers no longer have, so it is set here
    instead."""
    if not scorer.rescale_with_baseline:
        return 0.0
    baseline = float(scorer.baseline_vals[2])
    return (0.0 - baseline) / (1.0 - baseline)
