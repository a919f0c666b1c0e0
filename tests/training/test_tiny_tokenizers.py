"""The tiny WordPiece tokenizer: BERT-style pieces learned from the texts, and the same vocabulary in every process
(the tiny encoders, the demo's tiny rows and benchmarks/encoders/demo_encoder_stages.py rely on it)."""

import os
import subprocess
import sys

from radmetrics.training.tiny import SPECIAL_WORDPIECE, train_wordpiece_tokenizer, wordpiece_vocabulary

TEXTS = ["Lower lobe opacity. Lowest lung volumes.", "Low lung volumes, lower than before.", "No opacity."] * 3


def test_vocabulary_holds_specials_alphabet_continuations_and_merges():
    vocabulary = wordpiece_vocabulary(TEXTS, 60, SPECIAL_WORDPIECE)
    assert vocabulary[: len(SPECIAL_WORDPIECE)] == SPECIAL_WORDPIECE and len(vocabulary) == len(set(vocabulary))
    assert {"l", "o", "##o", "##w", "."} <= set(vocabulary)  # initial letters, continuations, punctuation alone
    assert "L" not in vocabulary  # lower-cased
    merges = vocabulary[vocabulary.index("##y") + 1 :]  # after the sorted alphabet and its continuations
    assert merges[:3] == ["lo", "low", "##es"]  # the most frequent pairs merge first
    assert {"##er", "##acity", "##olumes"} <= set(vocabulary)  # merges of continuation pieces keep one prefix
    assert len(vocabulary) == 60


def test_tokenizer_splits_into_learned_pieces(tmp_path):
    tokenizer = train_wordpiece_tokenizer(TEXTS, tmp_path, vocab_size=60)
    assert tokenizer.tokenize("Lower lungs") == ["low", "##er", "l", "##u", "##ng", "##s"]
    assert tokenizer.tokenize("xyz") == ["[UNK]"]  # letters it never saw


def test_same_vocabulary_in_every_process():
    """Other hash seeds in other processes: tokenizers' Rust trainer gave another vocabulary in each."""
    program = (
        "from radmetrics.data_builders.corpus.corpora import iu_xray_corpus;"
        "from radmetrics.training.tiny import SPECIAL_WORDPIECE, wordpiece_vocabulary;"
        "print(hash('seed'), '|'.join(wordpiece_vocabulary([r.text for r in iu_xray_corpus()[:400]], 800,"
        " SPECIAL_WORDPIECE)))"
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.split(" ", 1)
        for seed in ("1", "2")
    ]
    assert outputs[0][0] != outputs[1][0]  # the two processes did hash strings differently
    assert outputs[0][1] == outputs[1][1] and outputs[0][1].count("|") == 799
