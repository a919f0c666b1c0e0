"""RadGraph F1: reward levels simple / partial / complete as radgraph==0.1.18 `F1RadGraph` computes them (mean
of per-pair rewards; 0 when either report has no entities), the precision and recall behind each level's F1
(`radgraph_<level>_precision`, `_recall`: the entity matches over the candidate's and the reference's, the same sets
and the same 0 rule), and RadCliQ's RadGraph feature, (entity F1 +
relation F1) / 2 (CXR-Report-Metric).

Component `radgraph`: a released model (`radgraph`, `radgraph-xl`, `modern-radgraph-xl` tarballs of
StanfordAIMI/RRG_scorers, run as radgraph 0.1.18 runs them, see `dygie.py`) or radmetrics' own exported extractor.
Options: `case` ("insensitive" default, "reference" = radgraph 0.1.18, "sensitive"; see `f1.py`), `base_model`
(where a released model's transformer config and tokenizer are, default its Hub id through the cache).
"""

from __future__ import annotations

from ...loading.checkpoint import manifest_component
from ...loading.released import fetch
from ..base import Metric, MetricOutput, Option
from ..display import entity_display
from .annotation import short_label
from .extractor import RadGraphExtractor
from .f1 import radgraph_radcliq, radgraph_scores


def radgraph_extractor(path: str, base_model: str | None = None):
    """A released RadGraph model (raw or converted) as `RadGraphDyGIE`, else radmetrics' `RadGraphExtractor`."""
    from .dygie import RadGraphDyGIE

    if manifest_component(fetch(path)) in (None, "radgraph_dygie"):
        return RadGraphDyGIE.from_component(path, base_model)
    return RadGraphExtractor.from_export(path)


LEVEL_KEYS = ("radgraph_simple", "radgraph_partial", "radgraph_complete")
PR_KEYS = tuple(f"{key}_{part}" for key in LEVEL_KEYS for part in ("precision", "recall"))


class RadGraph(Metric):
    name = "radgraph"
    runs_encoder = True
    options = {
        "case": Option(
            "insensitive",
            True,
            "entity text comparison: insensitive, reference (radgraph 0.1.18) or sensitive",
            type=str,
            choices=("insensitive", "reference", "sensitive"),
        ),
        "base_model": Option(
            None, False, "where a released model's config and tokenizer are (default: its Hub id)", type=str
        ),
    }
    keys = (*LEVEL_KEYS, "radgraph_radcliq", *PR_KEYS)
    higher_is_better = dict.fromkeys(keys, True)
    reference = (
        "RadGraph F1 (Delbrouck et al. 2022; radgraph==0.1.18 F1RadGraph) and RadCliQ's radgraph_combined (Yu et al."
        " 2023)"
    )
    citation = """@inproceedings{jain2021radgraph, title={RadGraph: Extracting Clinical Entities and Relations from \
Radiology Reports},
  author={Jain, Saahil and others}, booktitle={NeurIPS Datasets and Benchmarks}, year={2021}}"""
    requires_components = ("radgraph",)

    @classmethod
    def display_detail(cls, detail):
        """Entities coloured matched or not: matched when the other report has one of the same text and label (RadGraph
        F1's entity match at its partial level)."""

        def entities(annotation):
            return [
                (str(e.get("tokens", "")).lower(), short_label(e.get("label", "")))
                for e in (annotation or {}).get("entities", {}).values()
            ]

        return entity_display(
            entities(detail.get("reference_annotation")), entities(detail.get("candidate_annotation"))
        )

    def compute(self, references, candidates):
        extractor = self.loaded(
            "extractor",
            lambda: radgraph_extractor(self.components["radgraph"], self.options["base_model"]),
            self.components["radgraph"],
            self.options["base_model"],
        )
        graphs = extractor.annotations([*references, *candidates])  # one pass: shared reports run once
        ref_graphs, hyp_graphs = graphs[: len(references)], graphs[len(references) :]
        case = self.options["case"]
        per_sample: dict[str, list[float]] = {key: [] for key in self.keys}
        for hyp, ref in zip(hyp_graphs, ref_graphs):
            for key, level in zip(LEVEL_KEYS, ("simple", "partial", "complete")):
                f1, precision, recall = radgraph_scores(hyp, ref, level, case)
                per_sample[key].append(f1)
                per_sample[f"{key}_precision"].append(precision)
                per_sample[f"{key}_recall"].append(recall)
            per_sample["radgraph_radcliq"].append(radgraph_radcliq(hyp, ref))
        details = [{"reference_annotation": r, "candidate_annotation": h} for r, h in zip(ref_graphs, hyp_graphs)]
        return MetricOutput(per_sample, details=details)
