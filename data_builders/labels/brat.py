"""BRAT standoff: each report a `NAME.txt` beside its `NAME.ann`, entities as `T` lines (character offsets into the
text, end exclusive) and relations as `R` lines from Arg1 to Arg2. Give the .ann files (or folders holding them).
A span made of several fragments (`0 5;9 14`) is refused as discontinuous, a span that does not start and end on a
word of the text (as the scorer splits it) as off its token boundaries; `#` notes are skipped, and attribute, event
and normalisation lines (A, E, N, M) are refused, since radmetrics would not read them.

    NAME.txt:  Small left effusion.
    NAME.ann:  T1	OBS-DP 0 5	Small
               T2	ANAT-DP 6 10	left
               T3	OBS-DP 11 19	effusion
               R1	located_at Arg1:T3 Arg2:T2
"""

from __future__ import annotations

from pathlib import Path

from radmetrics.inference.files.atomic import write_text

from .graph_records import graph_document
from .problems import Problems
from .token_records import char_span_to_tokens, token_offsets


def ann_files(paths: list[str | Path]) -> list[Path]:
    """The .ann files named, and those inside the folders named (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        found.extend(sorted(path.rglob("*.ann")) if path.is_dir() else [path])
    return found


def _entity(line: str, text: str, offsets, problems: Problems, where) -> tuple[str, tuple[int, int, str]] | None:
    fields = line.rstrip("\n").split("\t")
    head = fields[1].split(" ", 1) if len(fields) >= 2 else []
    if len(head) != 2:
        problems.add(*where, f"entity line {line.strip()!r} is not 'T<n>\\tLABEL START END\\tTEXT'")
        return None
    label, places = head
    if ";" in places:
        problems.add(*where, f"{fields[0]} {label} has a discontinuous span ({places})", "discontinuous")
        return None
    try:
        start, end = (int(x) for x in places.split())
    except ValueError:
        problems.add(*where, f"{fields[0]}: offsets {places!r} are not 'START END'")
        return None
    if len(fields) >= 3 and fields[2] != text[start:end]:
        problems.add(*where, f"{fields[0]}: text {fields[2]!r} is not the text at {start}-{end} ({text[start:end]!r})")
        return None
    found = char_span_to_tokens(offsets, start, end)
    if found is None:
        problems.add(
            *where, f"{fields[0]} {label} {text[start:end]!r} does not fall on word boundaries", ("off_token_boundary")
        )
        return None
    return fields[0], (*found, label)


def _relation(line: str, number: int, problems: Problems, where) -> tuple[str, str, str, int] | None:
    fields = line.rstrip("\n").split("\t")
    parts = fields[1].split() if len(fields) >= 2 else []
    args = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
    if len(parts) != 3 or set(args) != {"Arg1", "Arg2"}:
        problems.add(*where, f"relation line {line.strip()!r} is not 'R<n>\\tLABEL Arg1:T<a> Arg2:T<b>'")
        return None
    return args["Arg1"], args["Arg2"], parts[0], number


def read_brat_document(ann: Path, problems: Problems) -> dict | None:
    """One DyGIE document (graph_records.py) from NAME.ann and NAME.txt; bad lines go to `problems`."""
    txt = ann.with_suffix(".txt")
    if not txt.is_file():
        problems.add(ann, 1, f"{txt.name} (the report text) is missing beside {ann.name}")
        return None
    text = txt.read_text(encoding="utf-8-sig")
    tokens, offsets = token_offsets(text)
    entities, relations, bad = {}, [], len(problems)
    for number, line in enumerate(ann.read_text(encoding="utf-8-sig").splitlines(), 1):
        where = (ann, number)
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("T"):
            found = _entity(line, text, offsets, problems, where)
            if found:
                entities[found[0]] = found[1]
        elif line.startswith("R"):
            found = _relation(line, number, problems, where)
            if found:
                relations.append(found)
        else:
            problems.add(
                *where, f"annotation line {line.split()[0]!r}: only T (entity) and R (relation) lines are read"
            )
    if len(problems) > bad:
        return None
    return graph_document(ann.stem, tokens, entities, relations, (str(ann), 1), problems)


def read_brat(paths: list[str | Path], problems: Problems) -> list[dict]:
    documents = (read_brat_document(ann, problems) for ann in ann_files(paths))
    return [d for d in documents if d]


def write_brat(documents: list[dict], folder: str | Path) -> None:
    """DyGIE documents -> NAME.txt (the words joined by spaces) and NAME.ann per document, in `folder`."""
    folder = Path(folder)
    for doc in documents:
        tokens = [t for sentence in doc["sentences"] for t in sentence]
        starts = [sum(len(t) + 1 for t in tokens[:i]) for i in range(len(tokens))]
        text = " ".join(tokens)
        ids, lines = {}, []
        for start, end, label in sorted(e for sentence in doc["ner"] for e in sentence):
            ids[(start, end)] = f"T{len(ids) + 1}"
            begin, finish = starts[start], starts[end] + len(tokens[end])
            lines.append(f"{ids[(start, end)]}\t{label} {begin} {finish}\t{text[begin:finish]}")
        for n, (a, b, c, d, label) in enumerate(sorted(r for sentence in doc["relations"] for r in sentence), 1):
            lines.append(f"R{n}\t{label} Arg1:{ids[(a, b)]} Arg2:{ids[(c, d)]}")
        write_text(folder / f"{doc['doc_key']}.txt", text)
        write_text(folder / f"{doc['doc_key']}.ann", "\n".join(lines) + "\n")
