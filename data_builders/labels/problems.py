"""Bad records in a user's label files, collected while reading so that every one is reported, by file and line,
before any model loads; never dropped in silence.

A reader calls `problems.add(path, line, what, kind)` for each bad record and leaves the record out. The import then
either refuses the files (`LabelFileError`, one line naming every bad record: the CLI prints it and exits 2) or, when
the user asked to drop bad records, records the count per kind in the dataset's stats and card.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from radmetrics.inference.files.report_io import ReportFileError

# The kinds of bad record a reader names (the keys of the dropped counts).
KINDS = (
    "malformed",  # not parseable in the format at all
    "unknown_label",  # a label outside the label set
    "off_token_boundary",  # a character span that does not start and end on token boundaries
    "discontinuous",  # a BRAT span made of several fragments
    "empty_document",  # a document or sentence without tokens
    "bad_relation",  # a relation whose argument is not an entity of its document
    "duplicate_id",  # two records with the same id
)


class LabelFileError(ReportFileError):
    """A user's label file that cannot be used as it is (one line; the CLI prints it and exits 2)."""


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    kind: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


@dataclass
class Problems:
    found: list[Problem] = field(default_factory=list)

    def add(self, path: str | Path, line: int, what: str, kind: str = "malformed") -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown problem kind {kind!r}; expected one of {KINDS}")
        self.found.append(Problem(str(path), int(line), kind, what))

    def __len__(self) -> int:
        return len(self.found)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(p.kind for p in self.found).items()))

    def message(self, fix: str) -> str:
        """Every bad record on one line: 'N bad records (counts): file:line: what; ...; fix'."""
        listed = "; ".join(str(p) for p in self.found)
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        return f"{len(self.found)} bad record(s) ({kinds}): {listed}. {fix}"

    def refuse_or_count(self, drop: bool, fix: str) -> dict:
        """With `drop`, the counts of what was left out (for the run's record); else LabelFileError naming each."""
        if self.found and not drop:
            raise LabelFileError(self.message(fix))
        return {"dropped": self.counts(), "dropped_records": [str(p) for p in self.found]}
