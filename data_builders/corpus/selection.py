"""Which corpus a data command reads and how it is split: the choice the corpus options of `radmetrics data` make
(--kind, --path, the table columns, --split-by, --seed), its reports and its split assignment."""

from __future__ import annotations

from dataclasses import dataclass, field

from radmetrics.inference.files.report_io import ReportFileError


class EmptyCorpusError(ReportFileError):
    """A corpus with no report text: one line naming it."""


@dataclass
class CorpusChoice:
    kind: str = "iu_xray"
    path: str | None = None
    table_columns: dict = field(default_factory=dict)  # table corpora: id/findings/impression/text columns
    split_by: str = "text"
    seed: int = 0

    def reports(self) -> list:
        """The corpus' reports that have text; EmptyCorpusError when none has."""
        from .corpora import load_corpus

        options = self.table_columns if self.kind == "table" else {}
        reports = [r for r in load_corpus(self.kind, self.path, **options) if r.text]
        if not reports:
            raise EmptyCorpusError(
                f"the {self.kind} corpus at {self.path or 'the bundled default'} has no report text"
            )
        return reports

    def reports_and_splits(self) -> tuple[list, dict]:
        """The reports and their split assignment (split_by, seed)."""
        from .corpus_io import assign_splits

        reports = self.reports()
        return reports, assign_splits(reports, self.split_by, seed=self.seed)

    def provenance(self) -> dict:
        return {"corpus": self.kind, "path": self.path or "bundled", "split_by": self.split_by}
