"""What the causal-LM fine-tuning recipes share (GREEN's and CRIMSON's): LoRA/QLoRA arguments and their PEFT parts, and
the final model an adapter run is evaluated with (the adapter merged into its base first)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .distributed import barrier, is_main_process


@dataclass
class PeftArguments:
    use_peft: bool = field(default=False, metadata={"help": "train a LoRA adapter instead of all weights"})
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: list[str] = field(default_factory=lambda: ["all-linear"])
    load_in_4bit: bool = field(default=False, metadata={"help": "QLoRA: a 4-bit base (bitsandbytes, CUDA only)"})


def qlora_quantization():
    """4-bit NF4 base for QLoRA. Quantised weights are stored as bfloat16 so that ZeRO-3 (and FSDP) can shard them
    like any other bf16 parameter; with the default uint8 storage they cannot be partitioned across ranks."""
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
        bnb_4bit_quant_storage=torch.bfloat16,
    )


def peft_parts(peft_args: PeftArguments):
    """(quantization config, LoRA config), each None unless asked for; QLoRA refused without CUDA and bitsandbytes."""
    quantization, peft_config = None, None
    if peft_args.load_in_4bit:
        import importlib.util

        import torch

        if not torch.cuda.is_available() or importlib.util.find_spec("bitsandbytes") is None:
            raise RuntimeError(
                "load_in_4bit (QLoRA) needs a CUDA GPU and bitsandbytes (pip install 'radmetrics[gpu]')"
            )
        quantization = qlora_quantization()
    if peft_args.use_peft or peft_args.load_in_4bit:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=peft_args.lora_r,
            lora_alpha=peft_args.lora_alpha,
            lora_dropout=peft_args.lora_dropout,
            target_modules=(
                peft_args.lora_target_modules[0]
                if peft_args.lora_target_modules == ["all-linear"]
                else peft_args.lora_target_modules
            ),
            task_type="CAUSAL_LM",
        )
    return quantization, peft_config


def add_adapter_check(trainer, peft_config, lora_r: int) -> None:
    """Check the adapter after every save (training/green/adapters.py)."""
    if peft_config is None:
        return
    from peft.utils import get_peft_model_state_dict

    from ..green.adapters import AdapterCheck

    trainer.add_callback(AdapterCheck(set(get_peft_model_state_dict(trainer.model)), lora_r))


def final_model(final: Path, base: str, peft_config, attn_implementation: str):
    """The saved final/ model on this rank's inference device; an adapter run's adapter is merged into `base` first
    (on the main process, the others waiting)."""
    from transformers import AutoModelForCausalLM

    from radmetrics.inference.loading.hub import default_dtype, inference_device

    from ..green.causal_lm import attention_implementation

    if peft_config is not None:
        from ..green.adapters import merge_into_final

        if is_main_process():
            merge_into_final(final, base)
        barrier()
    model = AutoModelForCausalLM.from_pretrained(
        final, dtype=default_dtype(), attn_implementation=attention_implementation(attn_implementation)
    )
    return model.to(inference_device())
