"""RadGraph-style extractor over report text: per report a DyGIE document or the radgraph package's
annotation dict, from an exported span extractor with a relation head."""

from __future__ import annotations

from collections.abc import Sequence

from ...models.span_extraction import SpanExtractorRunner
from ...text.sentences import sentences_with_owner
from .annotation import dygie_document, dygie_to_annotation


class RadGraphExtractor(SpanExtractorRunner):
    """RadGraph-style extractor -> per report the radgraph package's annotation dict."""

    component = "radgraph"

    def documents(self, reports: Sequence[str]) -> list[dict]:
        """Per report a DyGIE document (document-level inclusive indices)."""
        sentences, owner = sentences_with_owner(reports)
        per_report: list[list] = [[] for _ in reports]
        for words, n, (entities, relations) in zip(sentences, owner, self.extract(sentences)):
            per_report[n].append((words, entities, relations))
        return [dygie_document(str(n), extracted) for n, extracted in enumerate(per_report)]

    def annotations(self, reports: Sequence[str]) -> list[dict]:
        return [dygie_to_annotation(doc) for doc in self.documents(reports)]
