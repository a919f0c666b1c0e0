"""What an encoder recipe checks in its `--silver_dir` before the tokenizer and the model, beside the rows and labels
that `data_builders/labels/recipe_data.py` checks: that the folder holds this recipe's kind of records (not another
recipe's), and that the recipe's options fit them. An entity the model can never see is trained on silently
otherwise: one wider than `max_span_width` is never a candidate span of rate_ner/span or radgraph/train, and one that
ends past the words `max_seq_length` keeps is cut off by truncation (a report given whole where the recipe reads
sentences). More than 1% of the entities cut is refused in one line naming the fix (RecordFormatError, which
`radmetrics train` and `radmetrics rehearse` print); fewer are logged as a warning.
"""

from __future__ import annotations

from pathlib import Path

from .logs import logger
from .record_checks import RecordFormatError

# What each labeler's dataset trains (`radmetrics data import` / `data silver` write ROOT/<labeler>/hf).
LABELER_RECIPES = {
    "rate_ner": "rate_ner/iob or rate_ner/span",
    "radgraph": "radgraph/train",
    "chexpert": "chexbert/finetune",
}
SPECIAL_TOKENS = 2  # [CLS] and [SEP]: a sentence keeps at most max_seq_length - 2 words, fewer when words split
MAX_CUT_SHARE = 0.01  # of the entities: more cut by the span width or truncation is a wrong option or unit


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


def _refuse_or_warn(cut: list[str], total: int, where: str, what: str, fix: str) -> None:
    """More than MAX_CUT_SHARE of the entities cut: refused (the records' units or the option are wrong); fewer: a
    warning naming the first (a few long sentences in a large corpus are truncated, as run_ner truncates them)."""
    if not cut:
        return
    message = f"{where}: {len(cut)} of {total} entities {what} (first: {cut[0]})"
    if len(cut) > MAX_CUT_SHARE * total:
        raise RecordFormatError(f"{message}: {fix}")
    logger.warning("%s; the model never sees them (%s)", message, fix)


def check_entity_positions(data, labeler: str, where: str, max_seq_length: int, max_span_width: int | None) -> None:
    """The entities of `data` (a rate_ner or radgraph DatasetDict) fit the recipe's span width and sequence length
    (module docstring): more than 1% that do not are refused, fewer logged; a chexpert dataset has no entities."""
    keeps = max_seq_length - SPECIAL_TOKENS
    wide, far, total = [], [], 0
    for split, n, start, end in _entity_bounds(data, labeler):
        total += 1
        if max_span_width is not None and end - start + 1 > max_span_width:
            wide.append((end - start + 1, f"{end - start + 1} words, {split} row {n}"))
        if end + 1 > keeps:
            far.append((end + 1, f"ends at word {end + 1} of its sentence, {split} row {n}"))
    widest = max((w for w, _ in wide), default=0)
    _refuse_or_warn(
        [place for _, place in wide],
        total,
        where,
        f"are wider than max_span_width {max_span_width}",
        f"pass --max_span_width {widest}",
    )
    furthest = max((w for w, _ in far), default=0)
    _refuse_or_warn(
        [place for _, place in far],
        total,
        where,
        f"end past the {keeps} words that max_seq_length {max_seq_length} keeps at most",
        f"split the records into sentences, or pass --max_seq_length {furthest + SPECIAL_TOKENS} or more",
    )
