"""--components entries are checked at the door: a folder whose manifest names no component is refused in one line,
not skipped (a judge or extractor given that way would otherwise be replaced silently by the shipped one)."""

import json

import pytest

from radmetrics.inference.loading.checkpoint import MANIFEST_NAME
from radmetrics.inference.loading.discovery import ComponentError, discover_components

pytestmark = pytest.mark.core


def test_a_manifest_that_names_no_component_is_refused(tmp_path):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / MANIFEST_NAME).write_text(json.dumps({"format_version": 1}))
    with pytest.raises(ComponentError, match="names no component"):
        discover_components([str(tmp_path / "export")])


def test_the_shipped_judge_is_found_as_a_finding_judge():
    from radmetrics.inference.metrics.semantic_green.judge import shipped_judge

    assert discover_components([str(shipped_judge())]) == {"finding_judge": str(shipped_judge())}
