"""RadGraph F1: reward levels simple / partial / complete as radgraph==0.1.18 `F1RadGraph` computes them (mean
of per-pair rewards; 0 when either report has no entities) and RadCliQ's RadGraph feature, (entity F1 +
relation F1) / 2 (CXR-Report-Metric).

Component `radgraph`: a released model (`radgraph`, `radgraph-xl`, `modern-radgraph-xl` tarballs of
StanfordAIMI/RRG_scorers, run as radgraph 0.1.18 runs them, see `dygie.py`) or radmetrics' own exported extractor.
Options: `case` ("insensitive" default, "reference" = radgraph 0.1.18, "sensitive"; see `f1.py`), `base_model`
(where a released model's transformer config and tokenizer are, default its Hub id through the cache).
`radcliq_model` (and its `radcliq_base_model`): another RadGraph model for the `radgraph_radcliq` key only, given as a
component is. RadCliQ's constants were fit on the original RadGraph (CXR-Report-Metric), and RadEval 2.2.1 computes its
`radgraph` key with RadGraph-XL but its RadCliQ with the original model; with `radgraph=radgraph-xl` and
`radcliq_model=radgraph` one process computes both as RadEval does. Without it, every key uses the `radgraph` component.
"""

from __future__ import annotations

from ..base import Metric, MetricOutput


def radgraph_extractor(path: str, base_model: str | None = None):
    """A released RadGraph model (raw or converted) as `RadGraphDyGIE`, else radmetrics' `RadGraphExtractor`."""
    from ...loading.checkpoint import manifest_component
    from ...loading.released import fetch
    from .dygie import RadGraphDyGIE
    from .extractor import RadGraphExtractor

    if manifest_component(fetch(path)) in (None, "radgraph_dygie"):
        return RadGraphDyGIE.from_component(path, base_model)
    return RadGraphExtractor.from_export(path)


LEVEL_KEYS = ("radgraph_simple", "radgraph_partial", "radgraph_complete")


class RadGraph(Metric):
    name = "radgraph"
    runs_encoder = True
    option_names = ("case", "base_model", "radcliq_model", "radcliq_base_model")
    keys = (*LEVEL_KEYS, "radgraph_radcliq")
    higher_is_better = dict.fromkeys(keys, True)
    reference = "RadGraph F1 (Delbrouck et al. 2022; radgraph==0.1.18 F1RadGraph) and RadCliQ's radgraph_combined (Yu et al. 2023)"
    requires_components = ("radgraph",)

    def compute(self, references, candidates):
        from .f1 import radgraph_f1, radgraph_radcliq

        model = (self.components["radgraph"], self.options.get("base_model"))
        radcliq_model = (self.options.get("radcliq_model"), self.options.get("radcliq_base_model"))
        if radcliq_model[1] and not radcliq_model[0]:
            raise ValueError("radgraph option radcliq_base_model is the base model of radcliq_model: set radcliq_model too")
        ref_graphs, hyp_graphs = self.graphs(*model, references, candidates)
        second = bool(radcliq_model[0]) and radcliq_model != model  # the same model again: its graphs serve both
        radcliq_graphs = self.graphs(*radcliq_model, references, candidates) if second else (ref_graphs, hyp_graphs)
        case = self.options.get("case", "insensitive")
        per_sample: dict[str, list[float]] = {key: [] for key in LEVEL_KEYS}
        for hyp, ref in zip(hyp_graphs, ref_graphs):
            for key, value in zip(LEVEL_KEYS, radgraph_f1(hyp, ref, level="all", case=case)):
                per_sample[key].append(value)
        per_sample["radgraph_radcliq"] = [radgraph_radcliq(hyp, ref) for ref, hyp in zip(*radcliq_graphs)]
        details = [{"reference_annotation": r, "candidate_annotation": h} for r, h in zip(ref_graphs, hyp_graphs)]
        if second:
            for row, r, h in zip(details, *radcliq_graphs):
                row.update(radcliq_reference_annotation=r, radcliq_candidate_annotation=h)
        return MetricOutput(per_sample, details=details)

    def graphs(self, model: str, base_model: str | None, references, candidates) -> tuple[list, list]:
        """The references' and candidates' graphs by one model, loaded once per process; one pass over both lists, so
        a report on both sides runs once."""
        extractor = self.loaded("extractor", lambda: radgraph_extractor(model, base_model), model, base_model)
        graphs = extractor.annotations([*references, *candidates])
        return graphs[:len(references)], graphs[len(references):]
