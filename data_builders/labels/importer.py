"""`radmetrics data import`'s work: read a user's label files in one format, check every record, split by report,
and write what the recipes read: OUT/<labeler>/{train,validation,test}.jsonl, its HF copy under hf/ and the label set
(labels.json), with OUT/stats.json and a dataset card OUT/README.md. A recipe then trains on it with
`--silver_dir OUT`.

Everything is checked before anything is written: bad records are refused together, one line naming each by file and
line (or, with `drop_bad`, left out and counted in the stats and card); then the label set, the splits and leakage.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from radmetrics.data_builders.corpus.splits import normalise_split_name
from radmetrics.inference.files.atomic import atomic_directory, write_text

from .brat import ann_files, read_brat_document
from .chexpert_csv import read_chexpert_csv
from .conll import read_conll
from .import_card import render_import_card
from .label_sets import allowed_labels, check_labels, write_label_set
from .label_splits import assign_splits, check_leakage
from .problems import LabelFileError, Problems
from .radgraph_json import read_radgraph_json
from .token_jsonl import read_token_jsonl

# format -> (the labeler folder the recipes read, the reader of one file)
FORMATS = {
    "conll": ("rate_ner", read_conll),
    "token-jsonl": ("rate_ner", read_token_jsonl),
    "radgraph-json": ("radgraph", read_radgraph_json),
    "brat": ("radgraph", lambda path, problems: [d for d in [read_brat_document(path, problems)] if d]),
    "chexpert-csv": ("chexpert", read_chexpert_csv),
}
RECIPES = {"rate_ner": "rate_ner/iob, rate_ner/span", "radgraph": "radgraph/train", "chexpert": "chexbert/finetune"}


@dataclass
class ImportOptions:
    format: str
    files: list[str]
    file_splits: list[str] | None = None
    labels: list[str] | None = None
    labels_from_data: bool = False
    drop_bad: bool = False
    allow_leakage: bool = False
    split_ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)
    seed: int = 0
    problems: Problems = field(default_factory=Problems, repr=False)

    def describe(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "problems"}


def input_files(options: ImportOptions) -> list[Path]:
    """The files to read (BRAT: the .ann files, folders searched), each checked to exist; LabelFileError otherwise."""
    if options.format not in FORMATS:
        raise LabelFileError(f"unknown label format {options.format!r}; choose from {', '.join(FORMATS)}")
    missing = [f for f in options.files if not Path(f).exists()]
    if missing:
        raise LabelFileError(f"label file(s) not found: {', '.join(missing)}")
    files = ann_files(options.files) if options.format == "brat" else [Path(f) for f in options.files]
    if not files:
        raise LabelFileError(f"no .ann files in {', '.join(options.files)} (BRAT reads NAME.ann beside NAME.txt)")
    if options.file_splits and len(options.file_splits) != len(options.files):
        raise LabelFileError(
            f"--file-splits names {len(options.file_splits)} split(s) for {len(options.files)} file(s): one per file"
        )
    try:
        options.file_splits = [normalise_split_name(s) for s in options.file_splits or []] or None
    except ValueError as exc:
        raise LabelFileError(f"--file-splits: {exc}") from None
    return files


def _file_split(options: ImportOptions, path: Path) -> str | None:
    if not options.file_splits:
        return None
    for given, split in zip(options.files, options.file_splits):
        if path == Path(given) or Path(given) in path.parents:
            return split
    return None


def read_records(options: ImportOptions) -> tuple[str, list[dict], dict]:
    """(labeler, the records that passed every check, the label set); LabelFileError naming every bad record unless
    `drop_bad`."""
    labeler, reader = FORMATS[options.format]
    records, problems = [], options.problems
    for path in input_files(options):
        for record in reader(path, problems):
            split = _file_split(options, path)
            if split and record.get("split") not in (None, split):
                problems.add(
                    *record["_source"], f"the record's split {record['split']!r} is not --file-splits' {split}"
                )
                continue
            records.append({**record, "split": split or record.get("split")})
    label_set = allowed_labels(labeler, records, options.labels, options.labels_from_data)
    records = _unique_ids(labeler, check_labels(labeler, records, label_set, problems), problems)
    fix = "Fix them, or pass --drop-bad to leave them out (counted in stats.json and the card)"
    options.problems = problems
    problems.refuse_or_count(options.drop_bad, fix)
    if not records:
        raise LabelFileError(f"no usable records in {', '.join(options.files)}")
    return labeler, records, label_set


def _unique_ids(labeler: str, records: list[dict], problems: Problems) -> list[dict]:
    key = "doc_key" if labeler == "radgraph" else "id"
    seen, kept = {}, []
    for record in records:
        if record[key] in seen:
            problems.add(
                *record["_source"], f"id {record[key]!r} again (first at {seen[record[key]]})", "duplicate_id"
            )
            continue
        seen[record[key]] = "{}:{}".format(*record["_source"])
        kept.append(record)
    return kept


def _published(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("_source", "split")}


def import_labels(options: ImportOptions, out: str | Path) -> dict:
    """Check, split and write the labels (module docstring); returns the stats written to OUT/stats.json."""
    from radmetrics.data_builders.corpus.corpus_io import write_split_records
    from radmetrics.data_builders.silver.dataset import ARROW_LAYOUT

    labeler, records, label_set = read_records(options)
    by_split, how = assign_splits(labeler, records, options.split_ratios, options.seed)
    overlap = check_leakage(labeler, by_split, options.allow_leakage)
    stats = {
        "format": options.format,
        "labeler": labeler,
        "recipes": RECIPES[labeler],
        "options": options.describe(),
        "records_per_split": {split: len(rs) for split, rs in by_split.items()},
        "label_set": label_set,
        "label_counts": _label_counts(labeler, records),
        "splits": how,
        "split_overlap": overlap,
        **options.problems.refuse_or_count(True, ""),
    }
    out = Path(out)
    with atomic_directory(out / labeler) as staging:
        write_split_records(
            {s: [_published(r) for r in rs] for s, rs in by_split.items()}, staging, to_arrow=ARROW_LAYOUT[labeler]
        )
        write_label_set(staging, label_set)
    write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")
    write_text(out / "README.md", render_import_card(stats))
    return stats


def _label_counts(labeler: str, records: list[dict]) -> dict:
    from radmetrics.data_builders.silver.dataset import label_distribution

    return label_distribution(labeler, records)
