"""Offline tiny models for CPU tests and `tiny` recipes: tokenizers trained on report text, random models from
configs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SPECIAL_WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(texts: Iterable[str], out_dir: str | Path, vocab_size: int = 2000):
    """A lower-casing WordPiece (BERT-style) tokenizer trained on `texts`, saved to `out_dir`."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizer

    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, special_tokens=SPECIAL_WORDPIECE)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out_dir))
    tokenizer = BertTokenizer(vocab=str(out_dir / "vocab.txt"), do_lower_case=True)
    if len(tokenizer) != trainer.get_vocab_size():  # the silent near-empty vocabulary trap
        raise RuntimeError(
            f"tokenizer built from {out_dir / 'vocab.txt'} has {len(tokenizer)} entries, expected"
            f" {trainer.get_vocab_size()}"
        )
    tokenizer.save_pretrained(out_dir)
    return tokenizer


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
