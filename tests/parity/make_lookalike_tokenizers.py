"""Train the small tokenizers of the released-weights look-alikes (committed under tests/data/released/tokenizers).

    python tests/parity/make_lookalike_tokenizers.py

BERT-family look-alikes reuse the real uncased BERT vocabulary shipped with the bundled all-MiniLM-L6-v2; the
others are trained here on IU X-ray report text (and, for the GREEN model, on the GREEN prompt) in the formats
their real counterparts use: ModernBERT's byte-level BPE framed by [CLS]/[SEP], DeBERTa-v3's Metaspace unigram
framed by [CLS]/[SEP], Llama-2's byte-fallback BPE with <s>, and Gemma-3's byte-fallback BPE without a prefix space,
with <bos> and its turn tokens (trained on CRIMSON's prompt too). Committed so that look-alikes, and the fixtures made
from them, do not change with the tokenizers library's trainers.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

OUT = Path(__file__).resolve().parents[1] / "data" / "released" / "tokenizers"


def _texts() -> list[str]:
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.inference.metrics.green.format import green_prompt

    texts = [r.text for r in iu_xray_corpus()][:2000]
    return texts + [green_prompt(texts[i], texts[i + 1]) for i in range(0, 40, 2)] + ["<|user|> <|assistant|>"] * 20


def modernbert(texts: list[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=800,
            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:0 [SEP]:0",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tokenizer


def deberta(texts: list[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Strip()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.train_from_iterator(
        texts,
        trainers.UnigramTrainer(
            vocab_size=700, special_tokens=["[PAD]", "[CLS]", "[SEP]", "[UNK]"], unk_token="[UNK]", show_progress=False
        ),
    )
    tokenizer.add_special_tokens(["[MASK]"])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    return tokenizer


def llama(texts: list[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tokenizer.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=1200,
            special_tokens=["<unk>", "<s>", "</s>", *(f"<0x{i:02X}>" for i in range(256))],
            show_progress=False,
        ),
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s>:0 $A:0", pair="<s>:0 $A:0 <s>:1 $B:1", special_tokens=[("<s>", 1)]
    )
    return tokenizer


GEMMA_SPECIAL = [
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_image>",
    "<end_of_image>",
    "<image_soft_token>",
]


def _crimson_texts(texts: list[str]) -> list[str]:
    from radmetrics.inference.metrics.crimson.prompt import crimson_messages

    chats = [crimson_messages(texts[i], texts[i + 1], {"Age": "63", "Indication": "cough"}) for i in range(0, 20, 2)]
    return [m["content"] for chat in chats for m in chat] + ["<start_of_turn>user\n<start_of_turn>model\n"] * 20


def gemma(texts: list[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tokenizer.train_from_iterator(
        texts + _crimson_texts(texts),
        trainers.BpeTrainer(
            vocab_size=1500,
            special_tokens=[*GEMMA_SPECIAL, *(f"<0x{i:02X}>" for i in range(256))],
            show_progress=False,
        ),
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos>:0 $A:0", pair="<bos>:0 $A:0 <bos>:1 $B:1", special_tokens=[("<bos>", 2)]
    )
    return tokenizer


def main() -> None:
    texts = _texts()
    for name, build in (("modernbert", modernbert), ("deberta", deberta), ("llama", llama), ("gemma", gemma)):
        (OUT / name).mkdir(parents=True, exist_ok=True)
        build(texts).save(str(OUT / name / "tokenizer.json"))
        print(OUT / name / "tokenizer.json")


if __name__ == "__main__":
    main()
