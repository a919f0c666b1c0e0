"""CoNLL token labels (IOB1 or IOB2): one token per line, its tag in the last whitespace-separated column, a blank
line between sentences, and `-DOCSTART- REPORT_ID` opening each report (CoNLL-2003's `-DOCSTART- -X- -X- O` opens an
unnamed one). Sentences before any `-DOCSTART-` are each a report of their own. Lines starting with `#` are comments.

    -DOCSTART- report_1
    No          O
    pleural     B-NON-ABNORMALITY
    effusion    I-NON-ABNORMALITY
    .           O
"""

from __future__ import annotations

from pathlib import Path

from radmetrics.inference.files.atomic import atomic_write

from .problems import Problems
from .token_records import ner_record, tag_problem, tags_to_spans

DOCSTART = "-DOCSTART-"


def _report_id(path: Path, fields: list[str], reports: int) -> str:
    named = [f for f in fields[1:] if f not in ("-X-", "O")]
    return named[0] if named else f"{path.stem}#doc{reports}"


def _sentence(path: Path, rows: list[tuple[int, str, str]], report: str, n: int, problems: Problems) -> dict | None:
    bad = [(line, tag_problem(tag)) for line, _, tag in rows if tag_problem(tag)]
    for line, why in bad:
        problems.add(path, line, why)
    if bad:
        return None
    tokens, tags = [token for _, token, _ in rows], [tag for _, _, tag in rows]
    record = ner_record(f"{report}#{n}", report, tokens, tags_to_spans(tags), None)
    record["_source"] = (str(path), rows[0][0])
    return record


def read_conll(path: str | Path, problems: Problems) -> list[dict]:
    """The sentences of a CoNLL file as NER records (token_records.py); bad lines go to `problems`."""
    path = Path(path)
    records: list[dict] = []
    rows: list[tuple[int, str, str]] = []
    report, reports, sentence_number, opened_at = None, 0, 0, 0

    def flush() -> None:
        nonlocal sentence_number
        if rows:
            owner = report or f"{path.stem}#s{len(records)}"
            record = _sentence(path, rows, owner, sentence_number, problems)
            sentence_number += 1
            if record:
                records.append(record)
            rows.clear()

    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields or line.startswith("#"):
                flush()
                continue
            if fields[0] == DOCSTART:
                flush()
                if report and not sentence_number:
                    problems.add(path, opened_at, f"report {report!r} has no tokens", "empty_document")
                report, sentence_number, opened_at = _report_id(path, fields, reports), 0, number
                reports += 1
            elif len(fields) < 2:
                problems.add(path, number, f"line {line.strip()!r} has a token but no tag column")
            else:
                rows.append((number, fields[0], fields[-1]))
    flush()
    if report and not sentence_number:
        problems.add(path, opened_at, f"report {report!r} has no tokens", "empty_document")
    return records


def write_conll(records: list[dict], path: str | Path) -> None:
    """NER records -> CoNLL (IOB2), a `-DOCSTART-` line per report (records of a report kept together, in order)."""
    order = list(dict.fromkeys(r["report_id"] for r in records))
    with atomic_write(path) as fh:
        for report in order:
            fh.write(f"{DOCSTART} {report}\n\n")
            for record in (r for r in records if r["report_id"] == report):
                fh.writelines(f"{token}\t{tag}\n" for token, tag in zip(record["tokens"], record["ner_tags"]))
                fh.write("\n")
