"""The released CheXbert labeler (`chexbert.pth` of StanfordAIMI/RRG_scorers; Smit et al. 2020), loaded as
f1chexbert==0.0.2 loads it, into radmetrics' `CheXbertLabeler`.

The checkpoint is a `torch.save` of {"model_state_dict": ...} from a DataParallel model: keys
`module.bert.*` (a BertModel with pooler) and `module.linear_heads.{0..13}` (13 four-class heads and the
two-class No Finding head). The BERT architecture and tokenizer come from `bert-base-uncased` (only its
config and vocabulary: every weight is in the checkpoint). Loading uses `torch.load(weights_only=True)`, so
no pickled object is ever executed. Where f1chexbert loads with strict=False (a missing weight silently
stays random), every weight here must be present except BERT's unused pooler.
"""

from __future__ import annotations

from pathlib import Path

from ...loading.hub import load_tokenizer
from ...loading.released import resolve_model_dir

BASE_MODEL = "bert-base-uncased"
_POOLER = ("encoder.pooler.dense.weight", "encoder.pooler.dense.bias")


class CheXbertCheckpointError(RuntimeError):
    pass


def checkpoint_file(path: str | Path) -> Path:
    path = Path(path)
    file = path / "chexbert.pth" if path.is_dir() else path
    if not file.is_file():
        raise CheXbertCheckpointError(
            f"{path}: chexbert.pth not found (the released CheXbert checkpoint, StanfordAIMI/RRG_scorers)"
        )
    return file


def released_state_dict(path: str | Path) -> dict:
    """The checkpoint's weights renamed to `CheXbertLabeler`'s keys (encoder.*, heads.*)."""
    import torch

    file = checkpoint_file(path)
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as exc:  # a pickle needing arbitrary objects, or not a torch file at all
        raise CheXbertCheckpointError(
            f"{file}: not loadable as plain tensors with torch.load(weights_only=True): {exc}"
        ) from exc
    state = state.get("model_state_dict", state)
    renamed, unknown = {}, []
    for key, value in state.items():
        key = key.replace("module.", "")  # the DataParallel prefix, removed as f1chexbert does
        if key.startswith("bert."):
            if not key.endswith("position_ids"):  # a non-persistent buffer in current transformers
                renamed["encoder." + key[len("bert.") :]] = value
        elif key.startswith("linear_heads."):
            renamed["heads." + key[len("linear_heads.") :]] = value
        else:
            unknown.append(key)
    if unknown:
        raise CheXbertCheckpointError(
            f"{file}: unexpected weights {unknown[:5]} (not a CheXbert bert_labeler checkpoint)"
        )
    return renamed


def load_released_chexbert(path: str | Path, base_model: str = BASE_MODEL):
    """(CheXbertLabeler in eval mode, tokenizer) from chexbert.pth and the base model's config and vocabulary."""
    from transformers import AutoConfig

    from .labeler import CheXbertConfig, CheXbertLabeler

    base = resolve_model_dir(base_model, "the released CheXbert")
    state = released_state_dict(path)
    model = CheXbertLabeler(CheXbertConfig.from_encoder(AutoConfig.from_pretrained(base)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if k not in _POOLER]
    if missing or unexpected:
        raise CheXbertCheckpointError(
            f"{path}: weights do not fit {base_model}'s architecture "
            f"(missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    return model.eval(), load_tokenizer(base)
