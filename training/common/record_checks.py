"""Checks, before a recipe builds a tokenizer or loads a model, that the records it was given are the kind it trains
on and fit its prompt: one line naming the file, the record and the fix (RecordFormatError, which `radmetrics train`
and `radmetrics rehearse` print as one line and exit 2).

- green/sft: GREEN annotation records (`reference`, `candidate`, `response` in GREEN's format); records the semantic
  teacher annotated over findings (`teacher_units: findings`) are read only with `prompt: findings`, which needs them;
  CRIMSON records are sent to crimson/sft.
- crimson/sft: CRIMSON teacher records (`response` a CRIMSON JSON answer the reference parser reads); GREEN records
  are sent to green/sft.
- encoder recipes: the silver dataset's columns for the labeler (`radmetrics data silver`), its rows and labels
  (data_builders/labels/recipe_data.py) and its entities against the recipe's span width and sequence length
  (encoder_data_checks.py); findings/classifier: its silver records' `text` and 0/1 `label` (`radmetrics data
  findings`); green/pretrain: the corpus' `text` (`radmetrics data pretrain-corpus`).
Every split the recipe reads must hold records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from radmetrics.inference.files.report_io import ReportFileError

SILVER_COLUMNS = {
    "chexpert": ("text", "labels"),
    "rate_ner": ("tokens", "ner_tags", "spans"),
    "radgraph": ("sentences", "ner", "relations"),
}


class RecordFormatError(ReportFileError):
    """Records that do not fit the recipe, its prompt or its units."""


def _is_green(response: str) -> bool:
    return "[Clinically Significant Errors]" in response or "[Matched Findings]" in response


def _is_crimson(response: str) -> bool:
    return response.lstrip().startswith(("{", "```"))


def _text_fields(record, where: str, fields: Iterable[str]) -> None:
    if not isinstance(record, Mapping):
        raise RecordFormatError(f"{where} is not a record (an object with {', '.join(fields)})")
    for name in fields:
        if not isinstance(record.get(name), str):
            found = "missing" if name not in record else f"{type(record[name]).__name__}, not text"
            fix = " (annotate the pairs first: radmetrics data annotate)" if name == "response" else ""
            raise RecordFormatError(f"{where}: field {name!r} is {found}{fix}")


def _no_records(path: str) -> RecordFormatError:
    return RecordFormatError(
        f"{path} holds no records: every split needs some (radmetrics data annotate splits pairs by reference "
        "report; give it more pairs)"
    )


def _non_empty(records_by_split: Mapping[str, list], files: Mapping[str, str]) -> None:
    for split, records in records_by_split.items():
        if not len(records):
            raise _no_records(files[split])


def refuse_empty_files(files: Mapping[str, str]) -> None:
    """A split file without a record (blank lines only) is refused before anything reads it."""
    for path in files.values():
        if not Path(path).read_text(encoding="utf-8").strip():
            raise _no_records(path)


def check_green_records(records_by_split: Mapping[str, list], files: Mapping[str, str], prompt: str) -> None:
    """green/sft's records and prompt (module docstring); `files`: the file each split was read from."""
    from radmetrics.inference.metrics.green.format import parse_green_response

    _non_empty(records_by_split, files)
    units = set()
    for split, records in records_by_split.items():
        for n, record in enumerate(records, 1):
            where = f"{files[split]}: record {n}"
            _text_fields(record, where, ("reference", "candidate", "response"))
            if _is_crimson(record["response"]) and not _is_green(record["response"]):
                raise RecordFormatError(
                    f"{where} holds a CRIMSON answer, not a GREEN response: train crimson/sft on it "
                    "(--annotations_dir), or annotate the pairs with --format green"
                )
            parsed = parse_green_response(record["response"])
            if not parsed.parsed:
                raise RecordFormatError(
                    f"{where}: the response is not in GREEN's format ({'; '.join(parsed.problems)}); re-annotate it"
                )
            units.add(record.get("teacher_units") or "statements")
    first = files[next(iter(files))]
    if len(units) > 1:
        raise RecordFormatError(
            f"{Path(first).parent} mixes records annotated over findings and over statements: annotate all of them "
            "with one --units"
        )
    if units == {"findings"} and prompt != "findings":
        raise RecordFormatError(
            f"{Path(first).parent}: the teacher judged each report's findings (teacher_units findings), which the "
            f"{prompt!r} prompt does not show: pass --prompt findings (or annotate with --units statements)"
        )
    if prompt == "findings" and units != {"findings"}:
        raise RecordFormatError(
            f"{Path(first).parent}: --prompt findings shows the findings the semantic teacher judged, and these "
            "records were annotated over statements: annotate with `radmetrics data annotate --units findings`, or "
            "pass --prompt numbered"
        )


def check_crimson_records(records_by_split: Mapping[str, list], files: Mapping[str, str]) -> None:
    """crimson/sft's records (module docstring)."""
    from radmetrics.inference.metrics.crimson.metric import evaluate_answer

    _non_empty(records_by_split, files)
    for split, records in records_by_split.items():
        for n, record in enumerate(records, 1):
            where = f"{files[split]}: record {n}"
            _text_fields(record, where, ("reference", "candidate", "response"))
            if _is_green(record["response"]):
                raise RecordFormatError(
                    f"{where} holds a GREEN response, not a CRIMSON answer: train green/sft on it (--pairs_dir), or "
                    "annotate the pairs with --format crimson"
                )
            try:
                evaluate_answer(record["response"])
            except Exception as exc:  # the reference parser's errors: the answer cannot be a training target
                raise RecordFormatError(
                    f"{where}: the response is not a CRIMSON answer the parser reads ({type(exc).__name__}: {exc})"
                ) from exc
            if record.get("context") is not None and not isinstance(record["context"], Mapping):
                raise RecordFormatError(f"{where}: `context` is {type(record['context']).__name__}, not an object")


def check_findings_records(splits: Mapping[str, list], directory: str | Path) -> None:
    """findings/classifier's records (`radmetrics data findings`): every split holds records, each with a `text` and
    a `label` of 0 or 1, and the training split holds both labels (a head cannot learn one class)."""
    for split, records in splits.items():
        where = f"{Path(directory) / f'findings_{split}.jsonl'}"
        if not records:
            raise RecordFormatError(
                f"{where} holds no records: build the silver labels with `radmetrics data findings`"
            )
        for n, record in enumerate(records, 1):
            _text_fields(record, f"{where}: record {n}", ("text",))
            if record.get("label") not in (0, 1) or isinstance(record.get("label"), bool):
                raise RecordFormatError(
                    f"{where}: record {n}: `label` is {record.get('label')!r}, not 0 (no finding) or 1 (a finding)"
                )
    if len({record["label"] for record in splits["train"]}) < 2:
        raise RecordFormatError(
            f"{Path(directory) / 'findings_train.jsonl'}: every training record has label "
            f"{splits['train'][0]['label']}: the head needs findings (1) and other statements (0) to learn from"
        )


def check_columns(data, wanted: Iterable[str], where: str, fix: str) -> None:
    """A DatasetDict a recipe trains on: each split non-empty, with the columns it reads; `fix`: how to build it."""
    for split in ("train", "validation", "test"):
        missing = [c for c in wanted if c not in data[split].column_names]
        if missing:
            raise RecordFormatError(
                f"{where}: the {split} split lacks column(s) {missing} (found {data[split].column_names}): {fix}"
            )
        if not len(data[split]):
            raise RecordFormatError(f"{where}: the {split} split holds no records: {fix}")


def check_silver_columns(data, labeler: str, where: str) -> None:
    """An encoder recipe's silver DatasetDict: each split non-empty, with the labeler's columns."""
    fix = f"build it with `radmetrics data silver --labelers {labeler}`"
    check_columns(data, SILVER_COLUMNS.get(labeler, ()), where, fix)


def missing_splits_hint(folder: Path) -> str:
    """What to do when a recipe's split files are missing from `folder`."""
    if (Path(folder) / "annotations.jsonl").is_file():
        return (
            f"; {folder} holds annotations.jsonl (data annotate --split-by none): annotate again without "
            "--split-by none to write the splits"
        )
    return "; `radmetrics data annotate --pairs FILE --out DIR` writes them"
