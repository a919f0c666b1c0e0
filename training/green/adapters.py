"""LoRA adapter checks and offline merging for the GREEN SFT recipe.

After every save the adapter file must hold exactly the LoRA tensors the model has, none empty (a ZeRO-3 save
without `stage3_gather_16bit_weights_on_model_save` writes empty shards), with rank-r shapes. At the end the
adapter is reloaded strictly onto a fresh, unsharded base on CPU, compared tensor by tensor, and merged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from transformers import TrainerCallback

ADAPTER_FILE = "adapter_model.safetensors"


class AdapterError(RuntimeError):
    pass


class AdapterCheck(TrainerCallback):
    """After each checkpoint save (before it is marked complete), check the adapter it holds."""

    def __init__(self, expected_keys: set[str], rank: int):
        self.expected_keys, self.rank = expected_keys, rank

    def on_save(self, args, state, control, **kwargs):
        from ..common.distributed import is_main_process

        if is_main_process():
            check_adapter_file(
                Path(args.output_dir) / f"checkpoint-{state.global_step}", self.expected_keys, self.rank
            )


def check_adapter_file(directory: str | Path, expected_keys: set[str] | None = None, rank: int | None = None) -> int:
    """Raise AdapterError unless `directory` holds a non-empty adapter (of rank `rank`, with `expected_keys`)."""
    from safetensors.torch import load_file

    path = Path(directory) / ADAPTER_FILE
    if not path.is_file():
        raise AdapterError(f"{path} is missing: the save wrote no LoRA adapter")
    tensors = load_file(str(path))
    if not tensors:
        raise AdapterError(f"{path} holds no tensors")
    empty = [k for k, v in tensors.items() if v.numel() == 0]
    if empty:
        raise AdapterError(
            f"{path}: {len(empty)} empty tensors (e.g. {empty[0]}); with ZeRO-3 set "
            "stage3_gather_16bit_weights_on_model_save: true"
        )
    if expected_keys is not None and set(tensors) != expected_keys:
        missing, extra = sorted(expected_keys - set(tensors)), sorted(set(tensors) - expected_keys)
        raise AdapterError(
            f"{path}: adapter keys differ from the model's (missing {missing[:3]}, unexpected {extra[:3]})"
        )
    if rank is not None:
        wrong = [
            k
            for k, v in tensors.items()
            if ("lora_A" in k and v.shape[0] != rank) or ("lora_B" in k and v.shape[1] != rank)
        ]
        if wrong:
            raise AdapterError(f"{path}: {wrong[0]} does not have rank {rank}")
    return len(tensors)


def merge_adapter(base_model: str, adapter_dir: str | Path, out_dir: str | Path, save_dtype: str = "bfloat16") -> Path:
    """Reload the adapter strictly onto an unsharded fp32 CPU copy of `base_model`, merge there (no rounding of the
    low-rank update before it is added), and save the merged model in `save_dtype` (bf16: half the size of fp32, the
    precision it trained in)."""
    import torch
    from peft import PeftModel
    from peft.utils import get_peft_model_state_dict
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from radmetrics.inference.loading.hub import resolve_model_path

    base = AutoModelForCausalLM.from_pretrained(resolve_model_path(base_model), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(adapter_dir), is_trainable=False)
    saved = load_file(str(Path(adapter_dir) / ADAPTER_FILE))
    loaded = get_peft_model_state_dict(model)
    if set(saved) != set(loaded):
        raise AdapterError(f"{adapter_dir}: reloaded adapter keys differ from the saved ones")
    changed = [k for k in saved if not torch.equal(saved[k].float(), loaded[k].float())]
    if changed:
        raise AdapterError(f"{adapter_dir}: {len(changed)} tensors differ after reloading (e.g. {changed[0]})")
    merged = model.merge_and_unload().to(getattr(torch, save_dtype))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    merged.save_pretrained(out)
    return out


def merge_into_final(final: Path, base_model: str) -> None:
    """final/ holds the adapter after training: move it to final/adapter/ and write the merged model in final/."""
    adapter = final / "adapter"
    adapter.mkdir(exist_ok=True)
    for path in list(final.iterdir()):
        if path.name.startswith("adapter_"):
            shutil.move(str(path), adapter / path.name)
    merge_adapter(base_model, adapter, final)
