"""Tiny random models of the same architecture family as the base models the GPU configs name, for rehearsals.

Each look-alike is a directory laid out as its Hub model is: the same `model_type` and model class, a tokenizer of
the same kind (sentencepiece `tokenizer.model` for Llama and Mistral, sentencepiece `spm.model` alone for
DeBERTa-v3, which transformers converts only with `sentencepiece` installed; byte-level BPE for Phi-2; WordPiece for
BERT), trained offline on report text, and random weights a few hundred kilobytes in size. Loading one goes through
the same code as loading the real model, so a config that cannot load its tokenizer or model fails here first.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

from radmetrics.inference.files import atomic

from .base_models import BASE_MODELS

FAMILIES = {model_id: base.family for model_id, base in BASE_MODELS.items()}  # Hub id -> architecture family
CAUSAL_FAMILIES = ("llama", "mistral", "phi", "gemma3")
GEMMA3_SPECIAL = ("<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>", "<image_soft_token>")
# Gemma 3's chat template (google/gemma-3-4b-it and google/medgemma-4b-it, tokenizer_config.json): a system message is
# folded into the first user turn, followed by a blank line; the assistant's turns are the model's.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}\n"
    "{%- if messages[0]['role'] == 'system' -%}\n"
    "    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}\n"
    "    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}\n"
    "    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n"
    "{%- else -%}\n"
    '    {%- set first_user_prefix = "" -%}\n'
    "    {%- set loop_messages = messages -%}\n"
    "{%- endif -%}\n"
    "{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    '        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}\n'
    "    {%- endif -%}\n"
    "    {%- if (message['role'] == 'assistant') -%}\n"
    '        {%- set role = "model" -%}\n'
    "    {%- else -%}\n"
    "        {%- set role = message['role'] -%}\n"
    "    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n"
    "        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n"
    "        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n"
    "                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n"
    "                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n"
    "        {%- endfor -%}\n"
    "    {%- else -%}\n"
    '        {{ raise_exception("Invalid content type") }}\n'
    "    {%- endif -%}\n"
    "    {{ '<end_of_turn>\n' }}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "    {{'<start_of_turn>model\n'}}\n"
    "{%- endif -%}\n"
)
SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)


def family_of(model_id: str) -> str:
    try:
        return FAMILIES[model_id]
    except KeyError:
        raise ValueError(f"no look-alike for {model_id!r}; known base models: {', '.join(sorted(FAMILIES))}") from None


def _sentencepiece(texts: Sequence[str], vocab_size: int, model_type: str, ids: dict[str, int], **options) -> bytes:
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        vocab_size=vocab_size,
        model_type=model_type,
        character_coverage=1.0,
        minloglevel=2,
        **{f"{k}_id": v for k, v in ids.items()},
        **options,
    )
    return model.getvalue()


def _write_json(path: Path, content: dict) -> None:
    atomic.write_text(path, json.dumps(content, indent=2))


def _tokenizer(family: str, texts: Sequence[str], out: Path, vocab_size: int):
    from transformers import AutoTokenizer

    from .tiny import train_bpe_tokenizer, train_wordpiece_tokenizer

    if family in ("llama", "mistral"):  # Llama-2 / Mistral-v0.1: sentencepiece BPE, <unk>=0 <s>=1 </s>=2, no pad
        (out / "tokenizer.model").write_bytes(
            _sentencepiece(texts, vocab_size, "bpe", {"unk": 0, "bos": 1, "eos": 2, "pad": -1})
        )
        _write_json(
            out / "tokenizer_config.json",
            {
                "tokenizer_class": "LlamaTokenizer",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "add_bos_token": True,
                "add_eos_token": False,
                "legacy": False,
                "model_max_length": 4096,
            },
        )
    elif (
        family == "gemma3"
    ):  # Gemma 3 / MedGemma: sentencepiece BPE with byte fallback, <pad>=0 <eos>=1 <bos>=2 <unk>=3
        from radmetrics.inference.metrics.crimson.prompt import prompt_parts

        texts = [*texts, *list(prompt_parts()["parts"].values()) * 50]  # the CRIMSON prompt gets merges of its own
        (out / "tokenizer.model").write_bytes(
            _sentencepiece(
                texts,
                vocab_size,
                "bpe",
                {"pad": 0, "eos": 1, "bos": 2, "unk": 3},
                byte_fallback=True,
                user_defined_symbols=",".join(GEMMA3_SPECIAL),
                split_by_whitespace=False,
            )
        )
        _write_json(
            out / "tokenizer_config.json",
            {
                "tokenizer_class": "GemmaTokenizer",
                "bos_token": "<bos>",
                "eos_token": "<eos>",
                "unk_token": "<unk>",
                "pad_token": "<pad>",
                "add_bos_token": True,
                "add_eos_token": False,
                "model_max_length": 131072,
                "chat_template": GEMMA3_CHAT_TEMPLATE,
            },
        )
    elif family == "deberta-v2":  # DeBERTa-v3: spm.model only, [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3
        (out / "spm.model").write_bytes(
            _sentencepiece(texts, vocab_size, "unigram", {"pad": 0, "bos": 1, "eos": 2, "unk": 3})
        )
        _write_json(
            out / "tokenizer_config.json",
            {
                "tokenizer_class": "DebertaV2Tokenizer",
                "do_lower_case": False,
                "vocab_type": "spm",
                "model_max_length": 512,
            },
        )
    elif family == "phi":  # Phi-2: GPT-2-style byte-level BPE
        train_bpe_tokenizer(texts, out, vocab_size=vocab_size)
    elif family == "bert":
        train_wordpiece_tokenizer(texts, out, vocab_size=vocab_size)
    tokenizer = AutoTokenizer.from_pretrained(out)
    if len(tokenizer) < vocab_size // 2:  # the silent near-empty vocabulary trap
        raise RuntimeError(
            f"{out}: the {family} look-alike tokenizer has {len(tokenizer)} entries, expected about {vocab_size}"
        )
    return tokenizer


def _config(family: str, tokenizer):
    from transformers import AutoConfig

    special = dict(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    vocab = len(tokenizer)
    if family == "llama":
        return AutoConfig.for_model(
            "llama", vocab_size=vocab, num_key_value_heads=2, max_position_embeddings=4096, **SMALL, **special
        )
    if family == "mistral":
        return AutoConfig.for_model(
            "mistral",
            vocab_size=vocab,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            sliding_window=4096,
            **SMALL,
            **special,
        )
    if family == "gemma3":  # MedGemma-4B-it: the image-text model (a SigLIP tower, a projector, Gemma 3's decoder)
        special_ids = {t: tokenizer.convert_tokens_to_ids(t) for t in GEMMA3_SPECIAL}
        text = dict(
            vocab_size=vocab,
            num_key_value_heads=1,
            head_dim=16,
            query_pre_attn_scalar=16,
            sliding_window=512,
            layer_types=["sliding_attention", "full_attention"],
            max_position_embeddings=8192,
            **SMALL,
            **special,
        )
        vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
        return AutoConfig.for_model(
            "gemma3",
            text_config=text,
            vision_config={**vision, "image_size": 56, "patch_size": 14, "vision_use_head": False},
            mm_tokens_per_image=4,
            boi_token_index=special_ids["<start_of_image>"],
            eoi_token_index=special_ids["<end_of_image>"],
            image_token_index=special_ids["<image_soft_token>"],
            eos_token_id=[tokenizer.eos_token_id, special_ids["<end_of_turn>"]],
            **{k: v for k, v in special.items() if k != "eos_token_id"},
        )
    if family == "phi":
        return AutoConfig.for_model(
            "phi", vocab_size=vocab, max_position_embeddings=2048, partial_rotary_factor=0.4, **SMALL, **special
        )
    if family == "deberta-v2":
        return AutoConfig.for_model(
            "deberta-v2",
            vocab_size=vocab,
            max_position_embeddings=512,
            relative_attention=True,
            position_buckets=64,
            pos_att_type=["p2c", "c2p"],
            norm_rel_ebd="layer_norm",
            position_biased_input=False,
            **SMALL,
            pad_token_id=tokenizer.pad_token_id,
        )
    return AutoConfig.for_model(
        "bert", vocab_size=vocab, max_position_embeddings=512, **SMALL, pad_token_id=tokenizer.pad_token_id
    )


def build_lookalike(
    model_id: str, texts: Sequence[str], out_dir: str | Path, vocab_size: int = 1000, seed: int = 0
) -> Path:
    """Write a tiny random model of `model_id`'s family, with a tokenizer trained on `texts`, to `out_dir`."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM

    family = family_of(model_id)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(family, texts, out, vocab_size)
    config = _config(family, tokenizer)
    torch.manual_seed(seed)
    model = (AutoModelForCausalLM if family in CAUSAL_FAMILIES else AutoModel).from_config(config)
    model.save_pretrained(out)
    _write_json(out / "lookalike.json", {"lookalike_of": model_id, "family": family, "model_type": config.model_type})
    return out
