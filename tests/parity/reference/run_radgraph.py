"""radgraph==0.1.18 on the look-alike tarballs (model_cache_dir=ROOT/radgraph, HF_HOME=ROOT/hf).

Annotations are stored compactly and losslessly: the text, and per entity in id order [start_ix, end_ix, label,
relations]; an entity's tokens are the text's words start_ix..end_ix, its id its position + 1."""

import os

from _common import arguments, environment, load, save
from radgraph import F1RadGraph, RadGraph


def compact(annotation: dict) -> dict:
    words = annotation["text"].split(" ")
    entities = [annotation["entities"][str(n + 1)] for n in range(len(annotation["entities"]))]
    assert all(e["tokens"] == " ".join(words[e["start_ix"] : e["end_ix"] + 1]) for e in entities)
    return {
        "text": annotation["text"],
        "entities": [[e["start_ix"], e["end_ix"], e["label"], e["relations"]] for e in entities],
    }


def annotate(extractor, reports: list[str]) -> list[dict]:
    found = extractor(reports)
    return [compact(found[str(i)]) for i in range(len(reports))]


def main() -> None:
    args = arguments()
    inputs = load(args.inputs)
    refs, hyps = inputs["references"], inputs["candidates"]
    cache = os.path.join(args.root, "radgraph")
    results = {"environment": environment("radgraph", "torch", "transformers")}
    for model_type in ("radgraph", "radgraph-xl", "modern-radgraph-xl"):
        extractor = RadGraph(model_type=model_type, model_cache_dir=cache, cuda=-1)
        scorer = F1RadGraph(reward_level="all", model_type=model_type, model_cache_dir=cache, cuda=-1)
        mean, rewards, _, _ = scorer(refs=refs, hyps=hyps)
        _, empty_rewards, _, _ = scorer(
            refs=inputs["empty_candidate_references"], hyps=inputs["empty_candidate_candidates"]
        )
        results[model_type] = {
            "reference_annotations": annotate(extractor, refs),
            "candidate_annotations": annotate(extractor, hyps),
            "mean": [float(m) for m in mean],
            "rewards": [[float(x) for x in level] for level in rewards],
            "empty_candidate_rewards": [[float(x) for x in level] for level in empty_rewards],
        }
    save(args.out, results)


if __name__ == "__main__":
    main()
