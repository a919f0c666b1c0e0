"""A user's report pairs for `radmetrics data annotate`: read from CSV or JSONL, split by reference report with a
leakage check, and written as the `{split}.jsonl` files green/sft (`--pairs_dir`) and crimson/sft
(`--annotations_dir`) read as they are.

Splits (`split_by`):
- `given`: each pair's own `split` column or field (train, validation/valid/val/dev, test), refused when a held-out
  pair's reference report repeats a training reference (normalised as corpus/splits.py normalises reports: case,
  punctuation and placeholders folded), since the student would be tested on reports it was trained on;
- `reference`: a seeded 80/10/10 hash of each pair's normalised reference report, so every pair of one report, and of
  every identical report, falls in one split (the same rule as `radmetrics data corpus`);
- `auto` (the default): `given` when every pair has a split, `reference` when none has; a file with some is refused;
- `none`: one `annotations.jsonl`, for annotations that will not be trained on.
"""

from __future__ import annotations

import json
from pathlib import Path

from radmetrics.inference.files.report_io import (
    ReportFileError,
    joined_sections,
    read_csv_rows,
    read_jsonl_records,
    read_text_file,
)

from ..corpus.leakage import overlap_card_section, split_overlap
from ..corpus.splits import SPLITS, normalise_split_name, text_split

SPLIT_METHODS = ("auto", "given", "reference", "none")


class PairFileError(ReportFileError):
    """A pair file that cannot be annotated as given (one line naming the file, the record and the fix)."""


def _records(path: Path) -> list[tuple[str, dict]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return [(f"line {n}", row) for n, row in read_csv_rows(path, read_text_file(path))]
    if suffix == ".jsonl":
        return [(f"line {n}", record) for n, record in read_jsonl_records(path)]
    raise PairFileError(f"{path}: pairs are read from .csv or .jsonl files, not {suffix or 'a file without suffix'!r}")


def _text(record: dict, field: str, path: Path, where: str, allow_empty: bool) -> str:
    value = joined_sections(record, field) if "+" in field else record.get(field)
    if field not in record and not all(name in record for name in field.split("+")):
        raise PairFileError(
            f"{path}: {where} has no field {field!r} (found {sorted(map(str, record))}); name the column with "
            "--reference-field / --candidate-field"
        )
    if not isinstance(value, str) and not (allow_empty and value is None):
        raise PairFileError(f"{path}: {where}: field {field!r} is {type(value).__name__}, not text")
    if not allow_empty and not value.strip():
        raise PairFileError(f"{path}: {where}: the reference ({field!r}) is empty")
    return value or ""


def read_pair_files(
    paths: list[str], reference_field: str = "reference", candidate_field: str = "candidate"
) -> list[dict]:
    """Every pair of `paths` (CSV or JSONL), in file order, as a record with `id`, `reference`, `candidate` and every
    other field it had; `split` normalised where given. An empty candidate is kept (a model's real output)."""
    pairs, seen = [], {}
    for name in paths:
        path = Path(name)
        for where, record in _records(path):
            if not isinstance(record, dict):
                raise PairFileError(f"{path}: {where} is not an object with a reference and a candidate")
            pair = {k: v for k, v in record.items() if k not in (reference_field, candidate_field)}
            pair["reference"] = _text(record, reference_field, path, where, allow_empty=False)
            pair["candidate"] = _text(record, candidate_field, path, where, allow_empty=True)
            pair["id"] = str(record["id"]) if record.get("id") not in (None, "") else str(len(pairs))
            if pair["id"] in seen:
                raise PairFileError(f"{path}: {where}: id {pair['id']!r} was already read at {seen[pair['id']]}")
            seen[pair["id"]] = f"{path} {where}"
            if pair.get("split") in (None, ""):
                pair.pop("split", None)
            else:
                try:
                    pair["split"] = normalise_split_name(pair["split"])
                except ValueError as exc:
                    raise PairFileError(f"{path}: {where}: {exc}") from None
            pairs.append(pair)
    if not pairs:
        raise PairFileError(f"no pairs in {', '.join(paths)}")
    return pairs


def assign_pair_splits(pairs: list[dict], split_by: str = "auto", seed: int = 0) -> tuple[list[dict], dict]:
    """(the pairs with their `split`, the split statistics with the leakage check). Module docstring for split_by."""
    if split_by not in SPLIT_METHODS:
        raise PairFileError(f"--split-by {split_by!r}: expected one of {', '.join(SPLIT_METHODS)}")
    given = sum("split" in p for p in pairs)
    if split_by == "auto":
        if 0 < given < len(pairs):
            raise PairFileError(
                f"{given} of {len(pairs)} pairs have a split and the others none: give every pair one, or pass "
                "--split-by reference to split all of them by reference report"
            )
        split_by = "given" if given else "reference"
    if split_by == "none":
        return [{k: v for k, v in p.items() if k != "split"} for p in pairs], {"split_by": "none"}
    if split_by == "given" and given < len(pairs):
        lacking = next(p["id"] for p in pairs if "split" not in p)
        raise PairFileError(f"--split-by given: pair {lacking!r} has no split; pass --split-by reference")
    if split_by == "reference":
        pairs = [{**p, "split": text_split(p["reference"], seed=seed)} for p in pairs]
    references: dict[str, dict[str, str]] = {}
    for pair in pairs:
        references.setdefault(pair["split"], {})[pair["reference"]] = pair["id"]
    overlap = split_overlap({split: list(texts) for split, texts in references.items()})
    leaked = {s: v["reports_in_train"] for s, v in overlap["per_split"].items() if v.get("reports_in_train")}
    if leaked:
        raise PairFileError(
            f"the given splits leak: {', '.join(f'{n} {s} reference report(s)' for s, n in leaked.items())} repeat a "
            "training reference (normalised text); pass --split-by reference to split the pairs by reference report"
        )
    per_split = {s: sum(p["split"] == s for p in pairs) for s in SPLITS}
    stats = {"split_by": split_by, "seed": seed, "pairs": len(pairs), "per_split": per_split, "split_overlap": overlap}
    return pairs, stats


def empty_splits(stats: dict) -> list[str]:
    return [s for s, n in stats.get("per_split", {}).items() if not n]


def write_split_files(records: list[dict], out: Path, stats: dict, to_arrow=None) -> dict[str, int]:
    """`{split}.jsonl` for train, validation and test (or `annotations.jsonl` when not split), their HF copy under
    `hf/`, `stats.json` (the splits and their overlap) and a short card; each file published whole. The count per
    file."""
    from datasets import Dataset, DatasetDict

    from radmetrics.inference.files.atomic import atomic_directory, write_text

    names = list(SPLITS) if stats["split_by"] != "none" else ["annotations"]
    by_file = {name: [r for r in records if r.get("split", "annotations") == name] for name in names}
    for name, rows in by_file.items():
        write_text(out / f"{name}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    convert = to_arrow or (lambda record: record)
    with atomic_directory(out / "hf") as staging:
        DatasetDict(
            {name: Dataset.from_list([convert(r) for r in rows]) for name, rows in by_file.items() if rows}
        ).save_to_disk(str(staging))
    write_text(out / "stats.json", json.dumps(stats, indent=2))
    if "split_overlap" in stats:
        write_text(out / "README.md", _card(stats))
    return {name: len(rows) for name, rows in by_file.items()}


def _card(stats: dict) -> str:
    return (
        "# radmetrics teacher annotations\n\nPairs annotated by `radmetrics data annotate`, split "
        f"{'by each pair' if stats['split_by'] == 'given' else 'by reference report'} ({stats['split_by']}): "
        f"`{json.dumps(stats['per_split'])}`.\n\n{overlap_card_section(stats['split_overlap'])}"
    )
