"""The docs a newcomer reads: the landing pages stay short, and every relative link in every Markdown file resolves."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


def test_every_relative_link_resolves():
    broken = []
    for page in markdown_files():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # code blocks hold no links
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_landing_pages_are_short():
    for page in ("README.md", "benchmarks/README.md"):
        lines = (REPO / page).read_text(encoding="utf-8").count("\n")
        assert lines <= 200, f"{page} has {lines} lines: it is a landing page; move detail to docs/"
