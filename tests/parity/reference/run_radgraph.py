"""radgraph==0.1.18 on the look-alike tarballs (model_cache_dir=ROOT/radgraph, HF_HOME=ROOT/hf)."""

import os

from _common import arguments, environment, load, save
from radgraph import F1RadGraph, RadGraph


def main() -> None:
    args = arguments()
    inputs = load(args.inputs)
    refs, hyps = inputs["references"], inputs["candidates"]
    cache = os.path.join(args.root, "radgraph")
    results = {"environment": environment("radgraph", "torch", "transformers")}
    for model_type in ("radgraph", "radgraph-xl", "modern-radgraph-xl"):
        extractor = RadGraph(model_type=model_type, model_cache_dir=cache, cuda=-1)
        annotate = lambda reports: [extractor(reports)[str(i)] for i in range(len(reports))]  # noqa: E731
        scorer = F1RadGraph(reward_level="all", model_type=model_type, model_cache_dir=cache, cuda=-1)
        mean, rewards, _, _ = scorer(refs=refs, hyps=hyps)
        results[model_type] = {"reference_annotations": annotate(refs), "candidate_annotations": annotate(hyps),
                               "mean": [float(m) for m in mean], "rewards": [[float(x) for x in level] for level in rewards]}
    save(args.out, results)


if __name__ == "__main__":
    main()
