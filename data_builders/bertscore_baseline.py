"""Make a bert-score rescaling baseline for an encoder bert-score has no file for.

bert-score's own baselines are the mean P, R and F per layer over a million unrelated Common Crawl
sentence pairs. Offline we use unrelated sentence pairs from the bundled IU X-ray reports instead, so the
rescaled score reads "how much better than two unrelated radiology sentences", the same intent.

    python -m radmetrics.data_builders.bertscore_baseline --pairs 5000 --out inference/resources/...
"""

from __future__ import annotations

import argparse
import random
import re

from radmetrics.inference.files import atomic
from radmetrics.inference.loading.hub import resolve_model_path

from .corpus.corpora import iu_xray_corpus


def unrelated_sentence_pairs(texts: list[str], n_pairs: int, seed: int = 0) -> tuple[list[str], list[str]]:
    sentences = [[s.strip() for s in re.split(r"(?<=\.)\s+", t) if len(s.split()) >= 3] for t in texts]
    pool = [(i, s) for i, sents in enumerate(sentences) for s in sents]
    rng = random.Random(seed)
    cands, refs = [], []
    while len(cands) < n_pairs:
        (i, a), (j, b) = rng.sample(pool, 2)
        if i != j and a.lower() != b.lower():
            cands.append(a)
            refs.append(b)
    return cands, refs


def main(argv=None) -> None:
    from collections import defaultdict

    import torch
    from bert_score.utils import bert_cos_score_idf, get_model, get_tokenizer
    from transformers import AutoConfig

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    path = resolve_model_path(args.model)
    tokenizer = get_tokenizer(path, use_fast=False)
    cands, refs = unrelated_sentence_pairs([r.text for r in iu_xray_corpus()], args.pairs, args.seed)
    n_layers = AutoConfig.from_pretrained(path).num_hidden_layers
    idf = defaultdict(lambda: 1.0)
    idf[tokenizer.sep_token_id] = 0
    idf[tokenizer.cls_token_id] = 0
    rows = []
    for layer in range(n_layers + 1):
        model = get_model(path, layer, all_layers=False)
        with torch.no_grad():
            prf = bert_cos_score_idf(model, refs, cands, tokenizer, idf, batch_size=64, device="cpu")
        p, r, f = prf[:, 0].mean().item(), prf[:, 1].mean().item(), prf[:, 2].mean().item()
        rows.append(f"{layer},{p},{r},{f}")
        print(rows[-1], flush=True)
    with atomic.atomic_write(args.out) as fh:
        fh.write("LAYER,P,R,F\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
