import json
import math

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from radmetrics.inference.metrics.lexical import (
    Bleu2RadCliQ,
    Bleu4Corpus,
    RougeL,
    _coco_bleu,
    _coco_stats,
    radcliq_bleu_tokens,
)

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


@pytest.fixture(scope="module")
def radeval_case(test_data):
    return json.loads((test_data / "oracles" / "radeval_bleu_rouge_expected.json").read_text())["cases"][0]


def test_bleu4_reproduces_radeval(radeval_case):
    refs, hyps, expected = radeval_case["refs"], radeval_case["hyps"], radeval_case["expected"]
    out = Bleu4Corpus()(refs, hyps)
    assert round(out.aggregate("bleu4"), 4) == expected["default"]["bleu"]
    for got, want in zip(out.per_sample["bleu4"], expected["per_sample"]["bleu"]):
        assert math.isclose(got, want, rel_tol=1e-4)
    stats = sum(_coco_stats(r, h) for r, h in zip(refs, hyps))
    for n in (1, 2, 3):
        lengths = stats[:2]
        sliced = [*lengths, *stats[2 : 2 + n], *stats[6 : 6 + n]]
        assert round(_coco_bleu(sliced, n), 4) == expected["detailed"][f"bleu_{n}"]


def test_rouge_l_reproduces_radeval(radeval_case):
    out = RougeL()(radeval_case["refs"], radeval_case["hyps"])
    assert round(out.aggregate("rougeL"), 4) == radeval_case["expected"]["default"]["rougeL"]
    for got, want in zip(out.per_sample["rougeL"], radeval_case["expected"]["per_sample"]["rougeL"]):
        assert math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-12)


def test_bleu2_matches_nltk_method1_as_fast_bleu_does(radeval_case):
    pairs = list(zip(radeval_case["refs"], radeval_case["hyps"])) + [
        ("no effusion.", "effusion no"),
        ("a", "a"),
        ("a b", "c d"),
        ("x.", ""),
    ]
    out = Bleu2RadCliQ()([r for r, _ in pairs], [h for _, h in pairs])
    for (ref, hyp), got in zip(pairs, out.per_sample["bleu2"]):
        r, h = radcliq_bleu_tokens(ref), radcliq_bleu_tokens(hyp)
        want = sentence_bleu([r], h, weights=(0.5, 0.5), smoothing_function=SmoothingFunction().method1) if h else 0.0
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (ref, hyp)


def test_radcliq_tokenisation():
    # CXR-Report-Metric only inserts a space before each period, so a missing space after one stays glued
    assert radcliq_bleu_tokens("No  effusion.Mild edema.") == ["no", "effusion", ".mild", "edema", "."]
    assert radcliq_bleu_tokens("Heart normal.") == ["heart", "normal", "."]
