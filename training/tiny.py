"""Offline tiny models for CPU tests and `tiny` recipes: tokenizers trained on report text, random models from
configs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from radmetrics.inference.files import atomic

SPECIAL_WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(texts: Iterable[str], out_dir: str | Path, vocab_size: int = 2000):
    """A lower-casing WordPiece (BERT-style) tokenizer trained on `texts`, saved to `out_dir`: the same vocabulary
    from the same texts in every process (`wordpiece_vocabulary`)."""
    from transformers import BertTokenizer

    vocabulary = wordpiece_vocabulary(texts, vocab_size, SPECIAL_WORDPIECE)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out_dir / "vocab.txt", "".join(f"{token}\n" for token in vocabulary))
    tokenizer = BertTokenizer(vocab=str(out_dir / "vocab.txt"), do_lower_case=True)
    if len(tokenizer) != len(vocabulary):  # the silent near-empty vocabulary trap
        raise RuntimeError(
            f"tokenizer built from {out_dir / 'vocab.txt'} has {len(tokenizer)} entries, expected {len(vocabulary)}"
        )
    tokenizer.save_pretrained(out_dir)
    return tokenizer


def wordpiece_vocabulary(
    texts: Iterable[str], vocab_size: int, specials: list[str], prefix: str = "##", limit_alphabet: int = 1000
) -> list[str]:
    """The vocabulary `tokenizers`' BertWordPieceTokenizer trains (BERT's normaliser and pre-tokeniser, a BPE whose
    non-initial pieces carry `prefix`, merges by pair frequency down to frequency 1), with ties broken by the pair's
    text. The Rust trainer numbers the `##` pieces in hash-map order, which changes from process to process, and breaks
    ties by those numbers: its vocabulary, and every tiny model trained on it, differed from run to run."""
    import heapq
    from collections import Counter, defaultdict

    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    normalizer, pre_tokenizer = BertNormalizer(lowercase=True), BertPreTokenizer()
    words = Counter(
        word for text in texts for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
    )
    characters = Counter()
    for word, count in words.items():
        for character in word:
            characters[character] += count
    alphabet = sorted(sorted(characters, key=lambda c: (-characters[c], c))[:limit_alphabet])
    kept = set(alphabet)
    splits = {}
    for word in words:
        pieces = [c for c in word if c in kept]
        if pieces:
            splits[word] = [pieces[0]] + [prefix + c for c in pieces[1:]]
    continuing = sorted({piece for pieces in splits.values() for piece in pieces[1:]})
    vocabulary = list(specials) + alphabet + continuing
    known = set(vocabulary)
    pair_counts: Counter = Counter()
    pair_words = defaultdict(set)
    for word, pieces in splits.items():
        for pair in zip(pieces, pieces[1:]):
            pair_counts[pair] += words[word]
            pair_words[pair].add(word)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)
    while len(vocabulary) < vocab_size and heap:
        count, pair = heapq.heappop(heap)
        if -count != pair_counts.get(pair) or count == 0:
            continue  # a stale entry: the pair's count changed since it was pushed
        first, second = pair
        merged = first + (second[len(prefix) :] if second.startswith(prefix) else second)
        if merged not in known:
            vocabulary.append(merged)
            known.add(merged)
        changed = Counter()
        for word in sorted(pair_words.pop(pair)):
            pieces, frequency = splits[word], words[word]
            for old in zip(pieces, pieces[1:]):
                changed[old] -= frequency
            merged_pieces, i = [], 0
            while i < len(pieces):
                if i + 1 < len(pieces) and (pieces[i], pieces[i + 1]) == pair:
                    merged_pieces.append(merged)
                    i += 2
                else:
                    merged_pieces.append(pieces[i])
                    i += 1
            splits[word] = merged_pieces
            for new in zip(merged_pieces, merged_pieces[1:]):
                changed[new] += frequency
                pair_words[new].add(word)
        for changed_pair, delta in changed.items():
            if delta:
                pair_counts[changed_pair] += delta
                if pair_counts[changed_pair] > 0:
                    heapq.heappush(heap, (-pair_counts[changed_pair], changed_pair))
        pair_counts.pop(pair, None)
    return vocabulary


def train_bpe_tokenizer(texts: Iterable[str], out_dir: str | Path, vocab_size: int = 2000):
    """A byte-level BPE tokenizer for causal LMs, with <s>, </s>, <pad> and <unk>, saved to `out_dir`."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, special_tokens=specials)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out_dir)
    return tokenizer


# The tiny encoders' shape: two layers of 64, for CPU tests and the demo's tiny recipes.
TINY_ENCODER_SHAPE = dict(
    hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, max_position_embeddings=512
)


def tiny_bert_config(vocab_size: int, **overrides):
    from transformers import BertConfig

    return BertConfig(**{**TINY_ENCODER_SHAPE, "vocab_size": vocab_size, **overrides})


def tiny_deberta_v2_config(vocab_size: int, **overrides):
    from transformers import DebertaV2Config

    relative = dict(relative_attention=True, position_buckets=64, pos_att_type=["p2c", "c2p"])
    return DebertaV2Config(**{**TINY_ENCODER_SHAPE, **relative, "vocab_size": vocab_size, **overrides})


def tiny_llama_config(vocab_size: int, pad_token_id: int, bos_token_id: int, eos_token_id: int, **overrides):
    from transformers import LlamaConfig

    shape = dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2
    )
    tokens = dict(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id)
    rest = dict(vocab_size=vocab_size, max_position_embeddings=2048, tie_word_embeddings=True)
    return LlamaConfig(**{**shape, **tokens, **rest, **overrides})
