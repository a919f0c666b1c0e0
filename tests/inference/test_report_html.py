"""report.html: one self-contained page per scoring run. Fast checks of its content and size here; the page is opened
in a real headless browser (Debian's chromium) in the slow test."""

import html
import json
import re
import shutil
import subprocess

import pytest
from cli_args import score_in

from radmetrics.inference.files.report_html import (
    compact_detail,
    render_score_report,
    write_compare_report,
    write_score_report,
)
from radmetrics.inference.scoring.scorer import Scorer

REFS = ["No acute cardiopulmonary process.", "Mild cardiomegaly.", "Small left pleural effusion.", "Lungs are clear."]
HYPS = ["No acute cardiopulmonary process.", "The heart is mildly enlarged.", "", "Normal chest </script> <b>x</b>."]


def embedded(page: str) -> dict:
    return json.loads(
        re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
        .group(1)
        .replace("<\\/", "</")
    )


def test_score_cli_writes_a_self_contained_report(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(REFS) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(HYPS) + "\n")
    assert score_in(tmp_path, "--metrics", "bleu2,rougeL", "--bootstrap", "20") == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "http://" not in page and "https://" not in page and "<script src" not in page  # nothing fetched
    assert page.count("<svg") == 2 and "<td>rougeL</td>" in page and "empty candidates" in page
    data = embedded(page)
    assert data["keys"] == ["bleu2", "rougeL"] and len(data["rows"]) == 4
    assert data["rows"][3]["candidate"] == HYPS[3]  # the text survives its own </script>


def test_details_are_drawn_as_each_metric_declares():
    annotation = {
        "entities": {"1": {"tokens": "Effusion", "label": "OBS-DP"}, "2": {"tokens": "left", "label": "ANAT-DP"}}
    }
    other = {"entities": {"1": {"tokens": "effusion", "label": "OBS-DP"}}}
    graph = compact_detail("radgraph", {"reference_annotation": annotation, "candidate_annotation": other})
    assert graph["entities"] == {
        "reference": [["effusion", "OBS-DP", True], ["left", "ANAT-DP", False]],
        "candidate": [["effusion", "OBS-DP", True]],
    }
    green = compact_detail(
        "green", {"response": "x", "significant": [1, 0, 0, 0, 0, 0], "insignificant": [0] * 6, "matched": 2}
    )
    assert green["tables"][0]["rows"][0][1:] == [1, 0] and green["notes"] == ["matched findings: 2"]
    assert compact_detail("green", {"response": "garbled", "error": "unparsable"}) == {
        "error": "unparsable",
        "response": "garbled",
    }
    chexbert = compact_detail("chexbert", {"reference_labels": [0] * 13 + [1], "candidate_labels": [0, 1] + [0] * 12})
    assert chexbert["tables"][0]["rows"] == [["Cardiomegaly", 0, 1], ["No Finding", 1, 0]]
    assert compact_detail("not_a_metric", {"x": 1})["texts"][0]["text"] == '{\n "x": 1\n}'


def test_ten_thousand_pairs_stay_small(monkeypatch):
    n = 10_000
    refs, hyps = (
        [f"Report {i}: mild cardiomegaly, no effusion." for i in range(n)],
        [f"Report {i}: lungs clear." for i in range(n)],
    )
    page = render_score_report(Scorer(["rougeL"], n_bootstrap=0)(refs, hyps), refs, hyps)
    assert len(page.encode()) < 3_000_000 and len(embedded(page)["rows"]) == n


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("the browser test needs Debian's chromium package (apt-get install chromium; .ci/run installs it)")
    return found


def headless(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_report_opens_sorts_and_shows_its_summary_in_chromium(tmp_path):
    from PIL import Image

    refs = [f"Heart size normal. Finding {i}." for i in range(300)]
    hyps = [f"Heart size normal. Finding {i % 7}." if i % 5 else "" for i in range(300)]
    result = Scorer(["bleu2", "rougeL"], n_bootstrap=50)(refs, hyps)
    path = write_score_report(result, tmp_path, refs, hyps)
    url = f"file://{path}"
    loaded = headless("--virtual-time-budget=5000", "--dump-dom", url)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert "Uncaught" not in loaded.stderr and "CONSOLE" not in loaded.stderr.replace("CONSOLE(0)", ""), loaded.stderr[
        -2000:
    ]
    assert "300 of 300 pairs" in loaded.stdout and "page 1 of 3" in loaded.stdout
    ascending = headless("--virtual-time-budget=5000", "--dump-dom", f"{url}#sort=rougeL&order=asc")
    texts = r'<td class="text"[^>]*>[^<]*</td><td class="text"[^>]*>[^<]*</td>'  # the pair's reference and candidate
    values = [
        float(v)
        for v in re.findall(
            rf'<tr data-i="\d+"><td>[^<]*</td>{texts}<td>[^<]*</td><td>([\d.]+)</td>', ascending.stdout
        )
    ]
    assert len(values) == 100 and values == sorted(values) and values[0] == 0.0  # the empty candidates first
    filtered = headless("--virtual-time-budget=5000", "--dump-dom", f"{url}#filter=rougeL>0.9")
    assert re.search(r"(\d+) of 300 pairs", filtered.stdout).group(1) == str(
        sum(r["rougeL"] > 0.9 for r in result.per_sample)
    )
    (tmp_path / "compare").mkdir()
    compare = write_compare_report(
        tmp_path / "compare", ("A", "B"), {}, result, 150, refs[:150], hyps[:150], hyps[150:]
    )
    spaced = headless("--virtual-time-budget=5000", "--dump-dom", f"file://{compare}#filter=rougeL (B) < 0.5")
    expected = sum(row["rougeL"] < 0.5 for row in result.per_sample[150:])
    assert 0 < expected < 150 and re.search(r"(\d+) of 150 pairs", spaced.stdout).group(1) == str(
        expected
    )  # a key with spaces
    shot = tmp_path / "summary.png"
    taken = headless("--virtual-time-budget=5000", "--window-size=1200,900", f"--screenshot={shot}", url)
    assert taken.returncode == 0 and shot.is_file()
    image = Image.open(shot).convert("L")
    assert image.size == (1200, 900) and image.getextrema()[0] < 100  # text drawn, not a blank page


MEASURE = """<script>setTimeout(() => {
  const texts = [...document.querySelectorAll('.hists svg text')].map(t => t.getBoundingClientRect());
  let overlaps = 0;
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i], b = texts[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
  }
  const sorted = [...document.querySelectorAll('#samples th')].find(th => /[▼▲]/.test(th.textContent));
  document.body.dataset.measure = JSON.stringify({
    width: document.documentElement.scrollWidth, labels: texts.length, overlaps,
    sorted: sorted ? sorted.textContent.replace(/ [▼▲]/, '') : null,
  });
}, 1000);</script>"""


@pytest.mark.slow
def test_the_page_fits_a_laptop_window_sorts_on_the_first_metric_named_and_keeps_its_labels_apart(tmp_path):
    """Eleven keys (a pairs table several screens wide unframed) in a 1,280 px window: the page does not scroll
    sideways, the table scrolls inside its frame, the pairs open sorted on the first metric the user named (not the
    registry's first, bleu2), and no two histogram labels overlap."""
    refs = [f"Heart size normal. Small left pleural effusion number {i}." for i in range(60)]
    hyps = [f"Heart size normal. Large right pleural effusion number {i % 9}." for i in range(60)]
    result = Scorer(["semantic_green", "rougeL", "bleu2", "bleu4"], n_bootstrap=20)(refs, hyps)
    assert result.first_key == "semantic_green" and len(result.summary) >= 11
    path = write_score_report(result, tmp_path, refs, hyps)
    path.write_text(path.read_text().replace("</body>", MEASURE + "</body>"))
    shown = headless("--virtual-time-budget=5000", "--window-size=1280,900", "--dump-dom", f"file://{path}")
    assert shown.returncode == 0, shown.stderr[-2000:]
    measure = json.loads(html.unescape(re.search(r'data-measure="([^"]+)"', shown.stdout).group(1)))
    assert measure["width"] <= 1280, measure
    assert measure["sorted"] == "semantic_green", measure
    assert measure["labels"] == 2 * len(result.summary) and measure["overlaps"] == 0, measure
