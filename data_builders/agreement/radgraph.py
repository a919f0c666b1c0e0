"""Agreement of the silver RadGraph-style extractor with the radgraph package's gold annotations.

Gold: the RadGraph and RadGraph-XL expected outputs bundled in data/radgraph (10 short reports). The
gold text is already tokenised (space-separated); we split it into sentences at "." tokens, extract,
and compare entities as (start, end, label) and relations as (source span, target span, label).

In-sample: these 10 reports were also the development target of the silver extractor's lexicon and rules
(inference/text/entity_lexicon.py, silver_radgraph.py), so every figure computed on them is in-sample, an optimistic
estimate rather than a held-out one; a model trained on the silver labels inherits that through its
teacher. A held-out figure needs gold reports the lexicon was never developed on.
"""

from __future__ import annotations

import json

from radmetrics.inference.metrics.radgraph.annotation import dygie_document, short_label
from radmetrics.inference.scoring.stats import precision_recall_f1

from ..corpus.corpora import bundled_path
from ..silver.radgraph import extract_sentence

GOLD_DESCRIPTION = "radgraph package test annotations (bundled, 10 reports)"
IN_SAMPLE_NOTE = (
    "The silver RadGraph lexicon and rules were developed on these 10 gold reports, so this agreement is "
    "in-sample: optimistic, not a held-out estimate."
)


def gold_documents() -> list[dict]:
    """Every bundled gold annotation dict (`text`, `entities`), labels in the original short schema."""
    docs = []
    cases = json.loads(bundled_path("radgraph", "radgraph_expected.json").read_text(encoding="utf-8"))["cases"]
    for case in cases:
        if "expected_annotations" in case:
            docs.extend(case["expected_annotations"].values())
        elif "expected_processed_annotations" in case:
            docs.extend(case["expected_processed_annotations"]["radgraph_annotations"].values())
    for report in json.loads(
        bundled_path("radgraph", "expected_processed_annotations_radgraph_xl.json").read_text(encoding="utf-8")
    ):
        docs.extend(report["processed_annotations"]["radgraph_annotations"].values())
    return docs


def _gold_sets(doc: dict) -> tuple[set, set]:
    entities = doc["entities"]
    spans = {key: (e["start_ix"], e["end_ix"]) for key, e in entities.items()}
    ents = {(*spans[k], short_label(e["label"])) for k, e in entities.items()}
    rels = {(*spans[k], *spans[target], label) for k, e in entities.items() for label, target in e["relations"]}
    return ents, rels


def _sentences(tokens: list[str]) -> list[list[str]]:
    """The words of each sentence, split after every "." token."""
    pieces, start = [], 0
    for end in [i + 1 for i, t in enumerate(tokens) if t == "."] + [len(tokens)]:
        if end > start:
            pieces.append(tokens[start:end])
        start = end
    return pieces


def _silver_extract(sentences: list[list[str]]) -> list[tuple[list, list]]:
    return [extract_sentence(words) for words in sentences]


def _prf(tp: int, n_pred: int, n_gold: int) -> dict:
    p, r, f1 = precision_recall_f1(tp, n_pred, n_gold)
    return {"precision": p, "recall": r, "f1": f1, "gold": n_gold, "predicted": n_pred}


def agreement_with_gold(extract_sentences=_silver_extract) -> dict:
    """Entity, entity-span and relation P/R/F1 of `extract_sentences` (word lists -> per sentence
    ([start, end, label], [s1, e1, s2, e2, label]) with sentence-level indices; default: the silver
    extractor) against the bundled gold. The figures are in-sample (module docstring) and say so."""
    counts = {"entities": [0, 0, 0], "entity_spans": [0, 0, 0], "relations": [0, 0, 0]}
    docs = gold_documents()
    for doc in docs:
        gold_e, gold_r = _gold_sets(doc)
        sentences = _sentences(doc["text"].split())
        predicted = dygie_document(
            "", ((w, *extracted) for w, extracted in zip(sentences, extract_sentences(sentences)))
        )
        pred_e = {tuple(e) for sentence in predicted["ner"] for e in sentence}
        pred_r = {tuple(r) for sentence in predicted["relations"] for r in sentence}
        for name, pred, gold in (
            ("entities", pred_e, gold_e),
            ("relations", pred_r, gold_r),
            ("entity_spans", {e[:2] for e in pred_e}, {e[:2] for e in gold_e}),
        ):
            counts[name][0] += len(pred & gold)
            counts[name][1] += len(pred)
            counts[name][2] += len(gold)
    return {
        "documents": len(docs),
        "in_sample": True,
        "note": IN_SAMPLE_NOTE,
        **{name: _prf(*c) for name, c in counts.items()},
    }
