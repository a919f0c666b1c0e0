import pytest

from radmetrics.inference.loading.hub import ModelLoadError, default_encoder, load_pretrained, load_tokenizer

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)


def test_default_encoder_is_pretrained_minilm_offline():
    import torch
    from transformers import AutoModel

    path = default_encoder()
    tokenizer = load_tokenizer(path)
    model = load_pretrained(AutoModel, "default")
    assert model.config.num_hidden_layers == 6 and len(tokenizer) > 30000
    batch = tokenizer(
        ["Mild cardiomegaly.", "The heart is mildly enlarged.", "No pneumothorax."], padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1)
    emb = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
    # a real pretrained encoder puts the paraphrase nearer than the unrelated finding
    assert emb[0] @ emb[1] > emb[0] @ emb[2]


def test_tiny_vocabulary_is_refused(tmp_path):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]")), unk_token="[UNK]"
    )
    tok.save_pretrained(tmp_path)
    with pytest.raises(ModelLoadError, match="only 2 entries"):
        load_tokenizer(tmp_path)


def test_missing_local_path_is_clear(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_tokenizer(str(tmp_path / "none"))


def test_tiny_models_build_offline(wordpiece_dir, tmp_path, iu_reports):
    from transformers import AutoModel, AutoModelForCausalLM

    from radmetrics.training.tiny import tiny_deberta_v2_config, tiny_llama_config, train_bpe_tokenizer

    tok = load_tokenizer(wordpiece_dir)
    assert AutoModel.from_config(tiny_deberta_v2_config(len(tok))).config.model_type == "deberta-v2"
    bpe = train_bpe_tokenizer([r.text for r in iu_reports[:300]], tmp_path / "bpe", vocab_size=600)
    llama = AutoModelForCausalLM.from_config(
        tiny_llama_config(len(bpe), bpe.pad_token_id, bpe.bos_token_id, bpe.eos_token_id)
    )
    out = llama(**bpe(["No acute findings."], return_tensors="pt"))
    assert out.logits.shape[-1] == len(bpe)
