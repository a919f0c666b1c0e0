"""Lexical metrics, each in the variant of the reference that defines it.

- `bleu2`: RadCliQ's BLEU-2 (Yu et al. 2023; rajpurkarlab/CXR-Report-Metric `prep_reports` + fast_bleu):
  lower-cased, "." split off as its own token, split on single spaces with empty tokens dropped,
  sentence BLEU with weights (1/2, 1/2) and NLTK smoothing method1 (epsilon 0.1 on zero n-gram counts),
  0 when no unigram matches. fast_bleu reproduces NLTK's sentence_bleu with method1.
- `bleu4`: corpus BLEU-4 as RadEval reports it (jbdel/RadEval `Bleu(n=4)`, i.e. pycocoevalcap's
  BleuScorer): whitespace tokens, case kept, closest reference length, tiny=1e-15 / small=1e-9 guards;
  per-sample values are the scorer's per-sentence BLEU-4.
- `rougeL`: ROUGE-L F-measure from Google's rouge_score with the Porter stemmer (RadEval's setting);
  the aggregate is the mean of per-sample F.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .base import Metric, MetricOutput, Option

BLEU_CITATION = """@inproceedings{papineni2002bleu, title={BLEU: a Method for Automatic Evaluation of Machine \
Translation},
  author={Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing}, booktitle={ACL}, year={2002}}"""


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def radcliq_bleu_tokens(text: str) -> list[str]:
    return [tok for tok in text.lower().replace(".", " .").split(" ") if tok != ""]


def sentence_bleu_method1(
    reference: Sequence[str], hypothesis: Sequence[str], max_n: int = 2, epsilon: float = 0.1
) -> float:
    """NLTK sentence_bleu with uniform weights and SmoothingFunction().method1, one reference."""
    if not hypothesis:
        return 0.0
    log_sum = 0.0
    for n in range(1, max_n + 1):
        hyp, ref = _ngrams(hypothesis, n), _ngrams(reference, n)
        clipped = sum(min(c, ref[g]) for g, c in hyp.items())
        denominator = max(1, sum(hyp.values()))
        if n == 1 and clipped == 0:
            return 0.0
        log_sum += math.log((clipped if clipped else epsilon) / denominator) / max_n
    c, r = len(hypothesis), len(reference)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(log_sum)


class Bleu2RadCliQ(Metric):
    name = "bleu2"
    keys = ("bleu2",)
    higher_is_better = {"bleu2": True}
    reference = "RadCliQ BLEU-2 (Yu et al. 2023; CXR-Report-Metric prep_reports + fast_bleu bigram)"
    citation = BLEU_CITATION

    def compute(self, references, candidates):
        scores = [
            sentence_bleu_method1(radcliq_bleu_tokens(r), radcliq_bleu_tokens(c), 2)
            for r, c in zip(references, candidates)
        ]
        return MetricOutput({"bleu2": scores})


_TINY, _SMALL = 1e-15, 1e-9


def _coco_stats(reference: str, candidate: str, n: int = 4) -> np.ndarray:
    """[testlen, reflen, guess_1..n, correct_1..n] for one pair (pycocoevalcap cook_test, 'closest')."""
    ref, hyp = reference.split(), candidate.split()
    guess = [max(0, len(hyp) - k + 1) for k in range(1, n + 1)]
    correct = []
    for k in range(1, n + 1):
        ref_counts = _ngrams(ref, k)
        correct.append(sum(min(c, ref_counts[g]) for g, c in _ngrams(hyp, k).items()))
    return np.array([len(hyp), len(ref), *guess, *correct], dtype=float)


def _coco_bleu(stats: np.ndarray, n: int = 4) -> float:
    """BLEU-n from summed statistics, as BleuScorer.compute_score does for the corpus and for one sentence."""
    testlen, reflen = stats[0], stats[1]
    guess, correct = stats[2 : 2 + n], stats[2 + n : 2 + 2 * n]
    bleu = 1.0
    for k in range(n):
        bleu *= (correct[k] + _TINY) / (guess[k] + _SMALL)
    score = bleu ** (1.0 / n)
    ratio = (testlen + _TINY) / (reflen + _SMALL)
    if ratio < 1:
        score *= math.exp(1 - 1 / ratio)
    return float(score)


class Bleu4Corpus(Metric):
    name = "bleu4"
    keys = ("bleu4",)
    higher_is_better = {"bleu4": True}
    reference = "corpus BLEU-4 as RadEval reports it (pycocoevalcap BleuScorer, option='closest')"
    citation = BLEU_CITATION

    def compute(self, references, candidates):
        stats = (
            np.stack([_coco_stats(r, c) for r, c in zip(references, candidates)]) if references else np.zeros((0, 10))
        )
        per_sample = [_coco_bleu(row) for row in stats]
        return MetricOutput(
            {"bleu4": per_sample},
            corpus_aggregate=self.corpus_aggregates({}, {"bleu4": stats}),
            statistics={"bleu4": stats.tolist()},
        )

    def corpus_aggregates(self, per_sample, statistics):
        """Corpus BLEU-4 from the summed per-pair [testlen, reflen, guess_1..4, correct_1..4] of the indices."""
        stats = np.asarray(statistics["bleu4"], dtype=float).reshape(-1, 10)
        return {"bleu4": lambda idx: _coco_bleu(stats[idx].sum(axis=0))}


class RougeL(Metric):
    name = "rougeL"
    options = {"use_stemmer": Option(True, True, "Porter stemming of both reports (RadEval's setting)", type=bool)}
    keys = ("rougeL",)
    higher_is_better = {"rougeL": True}
    reference = "ROUGE-L F (rouge_score, use_stemmer=True as in RadEval)"
    citation = """@inproceedings{lin2004rouge, title={ROUGE: A Package for Automatic Evaluation of Summaries}, \
author={Lin, Chin-Yew},
  booktitle={Text Summarization Branches Out}, year={2004}}"""

    def compute(self, references, candidates):
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=self.options["use_stemmer"])
        return MetricOutput(
            {"rougeL": [scorer.score(r, c)["rougeL"].fmeasure for r, c in zip(references, candidates)]}
        )
