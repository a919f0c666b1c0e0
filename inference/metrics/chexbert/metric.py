"""CheXbert label F1 (14 and 5 labels; micro, macro, weighted; uncertain as positive by default), precision and
recall (micro and macro; each condition's in run.json's meta) and
CheXbert vector similarity (cosine of [CLS] embeddings; RadCliQ's "semb_score", Yu et al. 2023).

The F1 keys are corpus-level: the aggregate (and every bootstrap resample) is computed from the stored
per-report label vectors; the per-sample value of a key is that F1 on the one report pair, for inspection
only. Option `uncertain_as_positive` (default True).
"""

from __future__ import annotations

import numpy as np

from ...loading.components import CHEXPERT_CONDITIONS
from ..base import Metric, MetricOutput, Option
from ..display import table
from .f1 import chexbert_f1, chexbert_precision_recall, per_condition
from .runner import CheXbertRunner

F1_KEYS = tuple(f"chexbert_f1_{n}_{kind}" for n in (14, 5) for kind in ("micro", "macro", "weighted"))
PR_KEYS = tuple(
    f"chexbert_{part}_{n}_{kind}" for part in ("precision", "recall") for n in (14, 5) for kind in ("micro", "macro")
)


class CheXbert(Metric):
    name = "chexbert"
    runs_encoder = True
    options = {
        "uncertain_as_positive": Option(
            True, True, "an uncertain label counts as positive (f1chexbert, RadEval)", type=bool
        ),
        "base_model": Option(
            None, False, "where a released model's config and tokenizer are (default: its Hub id)", type=str
        ),
    }
    keys = (*F1_KEYS, *PR_KEYS, "chexbert_similarity")
    higher_is_better = dict.fromkeys((*F1_KEYS, *PR_KEYS, "chexbert_similarity"), True)
    reference = "CheXbert labels (Smit et al. 2020) F1 as f1chexbert/RadEval; vector similarity as CXR-Report-Metric"
    citation = """@inproceedings{smit2020chexbert, title={CheXbert: Combining Automatic Labelers and Expert \
Annotations for Accurate
  Radiology Report Labeling Using BERT}, author={Smit, Akshay and Jain, Saahil and Rajpurkar, Pranav and Pareek, Anuj \
and Ng, Andrew Y.
  and Lungren, Matthew P.}, booktitle={EMNLP}, year={2020}}"""
    requires_components = ("chexbert",)

    @classmethod
    def display_detail(cls, detail):
        ref, cand = detail.get("reference_labels") or [], detail.get("candidate_labels") or []
        differing = [[name, r, c] for name, r, c in zip(CHEXPERT_CONDITIONS, ref, cand) if r != c]
        if not differing:
            return {"notes": ["same labels"]}
        return {"tables": [table("labels that differ", ["condition", "reference", "candidate"], differing)]}

    def compute(self, references, candidates):
        runner = self.loaded(
            "runner",
            lambda: CheXbertRunner.from_component(self.components["chexbert"], self.options["base_model"]),
            self.components["chexbert"],
            self.options["base_model"],
        )
        labels, embeddings = runner.labels_and_embeddings(
            [*references, *candidates]
        )  # one pass: shared reports run once
        n = len(references)
        ref_labels, ref_emb, hyp_labels, hyp_emb = labels[:n], embeddings[:n], labels[n:], embeddings[n:]
        uncertain = self.options["uncertain_as_positive"]

        def scores(ref, hyp):
            return {**chexbert_f1(ref, hyp, uncertain), **chexbert_precision_recall(ref, hyp, uncertain)}

        per_pair = [scores([r], [h]) for r, h in zip(ref_labels, hyp_labels)]
        per_sample = {key: [pair[key] for pair in per_pair] for key in (*F1_KEYS, *PR_KEYS)}
        similarity = (ref_emb * hyp_emb).sum(1) / (
            np.linalg.norm(ref_emb, axis=1) * np.linalg.norm(hyp_emb, axis=1)
        ).clip(1e-12)
        per_sample["chexbert_similarity"] = [float(s) for s in similarity]

        details = [
            {"reference_labels": r.tolist(), "candidate_labels": h.tolist()} for r, h in zip(ref_labels, hyp_labels)
        ]
        statistics = {"reference_labels": ref_labels, "candidate_labels": hyp_labels}
        return MetricOutput(
            per_sample,
            details=details,
            corpus_aggregate=self.corpus_aggregates(per_sample, statistics),
            meta=self.meta_from_statistics(statistics),
            statistics={name: labels.tolist() for name, labels in statistics.items()},
        )

    def corpus_aggregates(self, per_sample, statistics):
        """The F1, precision and recall keys over the reference and candidate labels of the indices."""
        ref_labels, hyp_labels = (np.asarray(statistics[k]) for k in ("reference_labels", "candidate_labels"))
        uncertain = self.options["uncertain_as_positive"]

        def corpus(key):
            def aggregate(idx):
                ref, hyp = ref_labels[idx], hyp_labels[idx]
                return {**chexbert_f1(ref, hyp, uncertain), **chexbert_precision_recall(ref, hyp, uncertain)}[key]

            return aggregate

        return {key: corpus(key) for key in (*F1_KEYS, *PR_KEYS)}

    def meta_from_statistics(self, statistics) -> dict:
        """Each condition's precision, recall, F1 and support over every pair (run.json), from the labels."""
        ref_labels, hyp_labels = (np.asarray(statistics[k]) for k in ("reference_labels", "candidate_labels"))
        if not len(ref_labels):
            return {}
        return {"per_condition": per_condition(ref_labels, hyp_labels, self.options["uncertain_as_positive"])}
