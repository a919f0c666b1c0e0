"""What an encoder recipe checks in its `--silver_dir` before the tokenizer and the model, beside the rows and labels
that `data_builders/labels/recipe_data.py` checks: that the folder holds this recipe's kind of records (not another
recipe's), and that the recipe's options fit them. An entity the model can never see is trained on silently
otherwise: one wider than `max_span_width` is never a candidate span of rate_ner/span or radgraph/train, and one that
ends past the words `max_seq_length` keeps is cut off by truncation (a report given whole where the recipe reads
sentences). One line naming the fix (RecordFormatError, which `radmetrics train` and `radmetrics rehearse` print).
"""

from __future__ import annotations

from pathlib import Path

from .record_checks import RecordFormatError

# What each labeler's dataset trains (`radmetrics data import` / `data silver` write ROOT/<labeler>/hf).
LABELER_RECIPES = {
    "rate_ner": "rate_ner/iob or rate_ner/span",
    "radgraph": "radgraph/train",
    "chexpert": "chexbert/finetune",
}
SPECIAL_TOKENS = 2  # [CLS] and [SEP]: a sentence keeps at most max_seq_length - 2 words, fewer when words split


def other_data(root: Path) -> str | None:
    """What `root` holds instead of a silver dataset, as 'X records (train Y on them)'; None when nothing known."""
    held = [name for name in LABELER_RECIPES if (root / name / "hf").is_dir()]
    if held:
        return "; ".join(f"{name} records (train {LABELER_RECIPES[name]} on them)" for name in held)
    if (root / "findings_train.jsonl").is_file():
        return "findings silver records (train findings/classifier on them)"
    if (root / "hf").is_dir():
        return "a pretraining corpus (train green/pretrain on it: --corpus_dir)"
    if (root / "train.jsonl").is_file() or (root / "annotations.jsonl").is_file():
        return "report pairs or annotations (train green/sft: --pairs_dir, or crimson/sft: --annotations_dir)"
    return None


def check_silver_folder(root: str | Path, labeler: str) -> None:
    """`root` (a --silver_dir) holds `labeler`'s dataset; if it holds another recipe's records, say which recipe."""
    root = Path(root)
    if (root / labeler / "hf").is_dir():
        return
    make = (
        f"--silver_dir is the output of `radmetrics data import FORMAT FILE... --out {root}` (your own labels) or of "
        f"`radmetrics data silver --labelers {labeler} --out {root}`"
    )
    if not root.is_dir():
        raise RecordFormatError(f"--silver_dir {root} does not exist: {make}")
    other = other_data(root)
    if other:
        raise RecordFormatError(
            f"--silver_dir {root} holds {other}, not {labeler} records for {LABELER_RECIPES[labeler]}: {make}"
        )
    raise RecordFormatError(f"{root / labeler / 'hf'} not found: {make}")


def _entity_bounds(data, labeler: str):
    """(split, row number, start, end) of every entity, in words within its sentence (end inclusive)."""
    for split in ("train", "validation", "test"):
        if labeler == "rate_ner":
            for n, spans in enumerate(data[split]["spans"]):
                for span in spans:
                    yield split, n, span["start"], span["end"]
        elif labeler == "radgraph":  # DyGIE: document-level word indices, one list per sentence
            for n, (sentences, ner) in enumerate(zip(data[split]["sentences"], data[split]["ner"])):
                offset = 0
                for words, entities in zip(sentences, ner):
                    for entity in entities:
                        yield split, n, entity["start"] - offset, entity["end"] - offset
                    offset += len(words)


def check_entity_positions(data, labeler: str, where: str, max_seq_length: int, max_span_width: int | None) -> None:
    """Every entity of `data` (a rate_ner or radgraph DatasetDict) fits the recipe's span width and sequence length
    (module docstring); a chexpert dataset has no entities."""
    widest = (0, None)
    last_word = (-1, None)
    for split, n, start, end in _entity_bounds(data, labeler):
        if end - start + 1 > widest[0]:
            widest = (end - start + 1, f"{split} row {n}")
        if end > last_word[0]:
            last_word = (end, f"{split} row {n}")
    if max_span_width is not None and widest[0] > max_span_width:
        raise RecordFormatError(
            f"{where}: an entity of {widest[0]} words ({widest[1]}) is wider than max_span_width {max_span_width}, "
            f"so the span model never sees it: pass --max_span_width {widest[0]}"
        )
    if last_word[0] + 1 > max_seq_length - SPECIAL_TOKENS:
        raise RecordFormatError(
            f"{where}: an entity ends at word {last_word[0] + 1} of its sentence ({last_word[1]}), past the "
            f"{max_seq_length - SPECIAL_TOKENS} words that max_seq_length {max_seq_length} keeps at most: split the "
            f"records into sentences, or pass --max_seq_length {last_word[0] + 1 + SPECIAL_TOKENS} or more"
        )
