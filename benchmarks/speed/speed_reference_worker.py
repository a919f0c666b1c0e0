"""One side of benchmarks/speed/scoring_speed_vs_reference.py, run in that side's own environment (no radmetrics
import):
the authors' package (f1chexbert 0.0.2, radgraph 0.1.18, ratescore 0.6.0, bert-score) or RadEval 2.2.1, on full-size
look-alikes.

    python speed_reference_worker.py --side f1chexbert|radgraph|ratescore|bert-score|radeval
                                     --metric chexbert|radgraph|ratescore|bertscore|radcliq|all
                                     --root LOOKALIKES --pairs PAIRS.json --out OUT.json

Times the first call (constructing the scorer, which loads the model, then scoring) and a second call on the same
object (warm), records the values both calls give (labels, entities, scores) and the process's peak resident memory.
HF_HOME and XDG_CACHE_HOME must point into the look-alikes (the driver sets them).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.util
import json
import os
import resource
import shutil
import sys
import time


def timed(make, call) -> dict:
    start = time.perf_counter()
    scorer = make()
    values = call(scorer)
    first = time.perf_counter() - start
    start = time.perf_counter()
    again = call(scorer)
    warm = time.perf_counter() - start
    return {"first_call_seconds": first, "warm_seconds": warm, "values": values, "warm_values_equal": again == values}


def head_recorder(model, recorded: list) -> None:
    """Records each report's 14 CheXbert head classes as the model computes them (a forward hook: no extra pass)."""

    def hook(module, inputs, outputs):
        classes = [out.argmax(dim=1).tolist() for out in outputs]
        recorded.extend([list(row) for row in zip(*classes)])

    model.register_forward_hook(hook)


def f1chexbert_side(refs, hyps, device: str) -> dict:
    from f1chexbert import F1CheXbert

    recorded: list = []

    def make():
        scorer = F1CheXbert(device=device)
        head_recorder(scorer.model, recorded)
        return scorer

    def call(scorer):
        recorded.clear()
        _, _, report_14, report_5 = scorer(hyps=hyps, refs=refs)  # labels the references first, then the candidates
        return {
            "reference_classes": recorded[: len(refs)],
            "candidate_classes": recorded[len(refs) :],
            "f1": {
                f"chexbert_f1_{n}_{kind}": report[f"{kind} avg"]["f1-score"]
                for n, report in ((14, report_14), (5, report_5))
                for kind in ("micro", "macro", "weighted")
            },
        }

    return timed(make, call)


def compact_graphs(annotations) -> list:
    return [
        [[e["start_ix"], e["end_ix"], e["label"], sorted(map(list, e["relations"]))] for e in a["entities"].values()]
        for a in annotations
    ]


def radgraph_side(root: str, refs, hyps, device: str) -> dict:
    from radgraph import F1RadGraph

    def make():
        return F1RadGraph(
            reward_level="all",
            model_type="radgraph-xl",
            model_cache_dir=os.path.join(root, "radgraph"),
            cuda=0 if device == "cuda" else -1,
        )

    def call(scorer):
        _, rewards, hyp_annotations, ref_annotations = scorer(refs=refs, hyps=hyps)
        return {
            "rewards": [[float(x) for x in level] for level in rewards],
            "reference_entities": compact_graphs(ref_annotations),
            "candidate_entities": compact_graphs(hyp_annotations),
        }

    return timed(make, call)


def ratescore_side(refs, hyps, device: str) -> dict:
    from loguru import logger

    logger.disable("PyRuSH")  # one log line per sentence otherwise
    from RaTEScore import scorer as scorer_module

    found: list = []
    run_ner = scorer_module.run_ner

    def recording_run_ner(*args, **kwargs):  # the entities compute_score finds, as it finds them
        result = run_ner(*args, **kwargs)
        found.append([[list(e) for e in entities] for entities in result])
        return result

    scorer_module.run_ner = recording_run_ner

    def call(scorer):
        found.clear()
        scores = scorer.compute_score(hyps, refs)
        return {"scores": [float(s) for s in scores], "reference_entities": found[0], "candidate_entities": found[1]}

    return timed(lambda: scorer_module.RaTEScore(use_gpu=device == "cuda"), call)


# RadCliQ's BERTScore as CXR-Report-Metric (CXRMetric/run_eval.py) and RadEval's RadCliQ-v1 (CompositeMetric) build it
RADCLIQ_BERTSCORE = {
    "model_type": "distilroberta-base",
    "num_layers": 5,
    "rescale_with_baseline": True,
    "idf": True,
    "lang": "en",
    "batch_size": 64,
}


def bert_score_side(refs, hyps, device: str) -> dict:
    """The bert-score package with RadCliQ's setting, idf weights from the references (the warm call reuses the
    scorer)."""
    from bert_score import BERTScorer

    def call(scorer):
        return {"bertscore": [float(f) for f in scorer.score(hyps, refs, verbose=False)[2]]}

    return timed(lambda: BERTScorer(**RADCLIQ_BERTSCORE, idf_sents=refs, device=device), call)


def radeval_bertscore_side(refs, hyps, device: str) -> dict:
    """The BERTScorer RadEval 2.2.1's RadCliQ-v1 builds (radeval/metrics/RadCliQv1/radcliq.py `_get_bert_scorer`): its
    vendored bert-score with the same setting, kept while the references are the same list (the warm call)."""
    from radeval.metrics.bertscore._vendor import BERTScorer

    def call(scorer):
        return {"bertscore": [float(f) for f in scorer.score(cands=hyps, refs=refs, verbose=False, batch_size=64)[2]]}

    return timed(
        lambda: BERTScorer(**RADCLIQ_BERTSCORE, idf_sents=refs, nthreads=4, all_layers=False, device=device), call
    )


class RadEvalAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """RadEval 2.2.1 installs as `radeval` but its vendored RadGraph imports `RadEval.metrics...` (jbdel/RadEval#27):
    on a case-sensitive file system `RadEval(metrics=["radgraph"])` fails with "No module named 'RadEval'". This
    finder answers `RadEval.X` with the already-imported `radeval.X`, one module object under both names."""

    def find_spec(self, name, path, target=None):
        if name == "RadEval" or name.startswith("RadEval."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("radeval" + spec.name[len("RadEval") :])

    def exec_module(self, module):
        pass


RADEVAL_NAMES = {
    "chexbert": "f1chexbert",
    "radgraph": "radgraph",
    "ratescore": "ratescore",
    "bertscore": "bertscore",
    "radcliq": "radcliq",
}
ALL = (
    "chexbert",
    "radgraph",
    "ratescore",
    "bertscore",
    "radcliq",
)  # `all`: the five model-based metrics in one process


def radeval_side(root: str, metric: str, refs, hyps, device: str) -> dict:
    """RadEval's public entry point, `RadEval(metrics=[...])(refs, hyps)`, per sample where it has per-sample values
    (RadGraph, RaTEScore) and unrounded (`detailed`) for CheXbert's corpus F1."""
    # RadEval caches its checkpoints under XDG_CACHE_HOME: chexbert.pth through hf_hub_download, RadGraph-XL unpacked
    cache = os.environ["XDG_CACHE_HOME"]
    hub = os.path.join(root, "hf", "hub", "models--StanfordAIMI--RRG_scorers")
    shutil.copytree(
        hub, os.path.join(cache, "chexbert", "models--StanfordAIMI--RRG_scorers"), dirs_exist_ok=True, symlinks=True
    )
    for model_type in ("radgraph-xl", "radgraph"):  # RadCliQ-v1 runs the original RadGraph
        shutil.copytree(
            os.path.join(root, "radgraph", model_type),
            os.path.join(cache, "radgraph", "0.1.18", model_type),
            dirs_exist_ok=True,
        )
    sys.meta_path.insert(0, RadEvalAlias())
    from radeval import RadEval
    from radeval.metrics.f1chexbert.f1chexbert import F1CheXbert

    # RadEval 2.2.1's CheXbert adapter constructs F1CheXbert() with its default device "cuda": on a machine without
    # CUDA `RadEval(metrics=["f1chexbert"])` raises. Give that default the device asked for.
    F1CheXbert.__init__.__kwdefaults__["device"] = device
    # With scikit-learn 1.9, RadEval's per-example accuracy hands a dense np.matrix to sklearn's sparse-only
    # count_nonzero, which raises; count the dense matrix's non-zeros as the sparse call would.
    import numpy as np
    from radeval.metrics import _chexbert_base

    sparse_count_nonzero = _chexbert_base.count_nonzero
    _chexbert_base.count_nonzero = lambda x, axis=None: (
        sparse_count_nonzero(x, axis=axis) if hasattr(x, "format") else np.asarray(x != 0).sum(axis=axis)
    )
    names = [RADEVAL_NAMES[m] for m in ALL] if metric == "all" else [RADEVAL_NAMES[metric]]

    def make():
        return {
            "per_sample": (
                RadEval(metrics=[n for n in names if n != "f1chexbert"], per_sample=True, show_progress=False)
                if names != ["f1chexbert"]
                else None
            ),
            "detailed": (
                RadEval(metrics=["f1chexbert"], detailed=True, show_progress=False) if "f1chexbert" in names else None
            ),
        }

    def call(scorers):
        out = {}
        if scorers["per_sample"] is not None:
            out.update(scorers["per_sample"](refs, hyps))
        if scorers["detailed"] is not None:
            found = scorers["detailed"](refs, hyps)
            out.update({k: v for k, v in found.items() if not isinstance(v, dict)})
        return json.loads(json.dumps(out, default=float))

    return timed(make, call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--side", required=True, choices=["f1chexbert", "radgraph", "ratescore", "bert-score", "radeval"]
    )
    parser.add_argument(
        "--metric", required=True, choices=["chexbert", "radgraph", "ratescore", "bertscore", "radcliq", "all"]
    )
    parser.add_argument("--root", required=True)
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="RadEval picks RadGraph's and RaTEScore's device itself",
    )
    args = parser.parse_args()
    with open(args.pairs, encoding="utf-8") as fh:
        pairs = json.load(fh)
    refs, hyps = [p["ref"] for p in pairs], [p["hyp"] for p in pairs]
    if args.side == "radeval" and args.metric == "bertscore":
        result = radeval_bertscore_side(refs, hyps, args.device)
    elif args.side == "radeval":
        result = radeval_side(args.root, args.metric, refs, hyps, args.device)
    elif args.side == "bert-score":
        result = bert_score_side(refs, hyps, args.device)
    elif args.side == "f1chexbert":
        result = f1chexbert_side(refs, hyps, args.device)
    elif args.side == "radgraph":
        result = radgraph_side(args.root, refs, hyps, args.device)
    else:
        result = ratescore_side(refs, hyps, args.device)
    import torch

    result.update(
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, torch_threads=torch.get_num_threads()
    )
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
