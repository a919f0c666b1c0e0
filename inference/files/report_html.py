"""`report.html`: one self-contained page per scoring run (no server, no network, no external script or font).

It shows the summary with intervals, each key's distribution (an SVG histogram drawn here), and a per-sample table
that sorts (click a header), filters (text in either report or the id; a key's range, e.g. `KEY<0.3`) and pages
through 100 rows at a time, so 10,000 pairs stay quick to open. A row opens its pair: both reports and each metric's
detail as its metric class's `display_detail` draws it (notes, entities coloured matched or not, tables, texts), cut
to keep the file small. `radmetrics compare` adds both systems side by side with the paired differences; `meta-eval`
adds its scatter plots.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Iterable
from pathlib import Path

from ..metrics.display import cut, json_detail
from ..scoring.registry import metrics
from .atomic import atomic_write, write_text
from .json_io import strict

BINS = 20
REPORT_TITLE = "radmetrics scores"
RESOURCES = Path(__file__).resolve().parent.parent / "resources" / "report_html"


def compact_detail(metric: str, detail: dict | None):
    """What the page shows of one metric's per-pair detail: the metric class's `display_detail` (see metrics/display.py
    for the parts), or the error when the pair was not scored."""
    if not isinstance(detail, dict):
        return None
    if "error" in detail:
        return {
            "error": cut(detail["error"]),
            **({"response": cut(detail["response"])} if detail.get("response") else {}),
        }
    cls = metrics().get(metric)
    return strict(cls.display_detail(detail) if cls is not None else json_detail(detail))


def histogram_svg(values: list[float], key: str) -> str:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return f"<p>{html.escape(key)}: no scored sample.</p>"
    low, high = min(finite), max(finite)
    width = (high - low) / BINS or 1.0
    counts = [0] * BINS
    for v in finite:
        counts[min(int((v - low) / width), BINS - 1)] += 1
    top = max(counts)
    bars = "".join(
        f'<rect x="{4 + i * 14}" y="{84 - 80 * c / top:.1f}" width="12" height="{80 * c / top:.1f}"><title>'
        f"[{low + i * width:.3g}, {low + (i + 1) * width:.3g}): {c}</title></rect>"
        for i, c in enumerate(counts)
    )
    return (
        f'<figure><svg viewBox="0 0 290 100" width="290" height="100" role="img" aria-label="{html.escape(key)}'
        f' histogram">{bars}<text x="4" y="98" font-size="10">{low:.3g}</text><text x="286" y="98" font-size="10"'
        f' text-anchor="end">{high:.3g}</text></svg><figcaption>{html.escape(key)}'
        f" (n={len(finite)})</figcaption></figure>"
    )


def signatures_list(signatures: dict) -> str:
    if not signatures:
        return ""
    items = "".join(f"<li><code>{html.escape(sig)}</code></li>" for sig in signatures.values())
    return (
        f"<details open><summary>Signatures: everything that changes each value (compare scores only where they "
        f'match)</summary><ul class="sigs">{items}</ul></details>'
    )


def summary_table(summary: dict) -> str:
    def number(value):
        return "n/a" if value is None else f"{value:.4f}"

    rows = []
    for key, s in summary.items():
        low, high = (s.get("ci95") or [None, None])[:2]
        interval = "n/a" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"
        warning = f'<span class="warn">{html.escape(s["warning"])}</span>' if s.get("warning") else ""
        cells = [
            html.escape(key),
            "↑" if s.get("higher_is_better") else "↓",
            number(s.get("value")),
            interval,
            s.get("n", ""),
            s.get("not_scored", 0),
            s.get("empty_candidates", 0),
            warning,
        ]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return (
        "<table><thead><tr><th>score</th><th>better</th><th>value</th><th>95% CI</th><th>n</th><th>not scored</th>"
        "<th>empty candidates</th><th></th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def escaped_json(value) -> str:
    """`value` as JSON that can sit inside a <script> element (no "&", "<" or ">")."""
    return (
        json.dumps(strict(value), allow_nan=False)
        .replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
    )


def page_start(title: str, body: str) -> str:
    """The page up to its data: the head, the title and the body."""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
        f"<body><h1>{html.escape(title)}</h1>{body}"
    )


DATA_OPEN = '<script id="data" type="application/json">'
PAGE_END = "</body></html>"


def page(title: str, body: str, data: dict | None = None) -> str:
    payload = "" if data is None else f"{DATA_OPEN}{escaped_json(data)}</script><script>{SCRIPT}</script>"
    return page_start(title, body) + payload + PAGE_END


def write_streamed_page(path: Path, title: str, body: str, header: dict, rows: Iterable[dict]) -> Path:
    """`page(title, body, {**header, "rows": list(rows)})`, byte for byte, written a row at a time (published
    through `atomic_write`): the rows, their JSON and the page are never held whole, so the memory that writes a page
    of 10,000 pairs is that of one pair."""
    if not header:
        raise ValueError("a page's data has its keys before its rows")
    with atomic_write(path) as fh:
        fh.write(page_start(title, body) + DATA_OPEN + escaped_json(header)[:-1] + ', "rows": [')
        for n, row in enumerate(rows):
            fh.write((", " if n else "") + escaped_json(row))
        fh.write(f"]}}</script><script>{SCRIPT}</script>{PAGE_END}")
    return Path(path)


def sample_header(keys: list[str], directions: dict, sort_key: str | None) -> dict:
    """The page's data before its rows: the keys, their directions and the key the pair table opens sorted on
    (`sort_key` when it is a key, else the first key)."""
    return {
        "keys": keys,
        "higher_is_better": {k: directions.get(k, True) for k in keys},
        "sort_key": sort_key if sort_key in keys else (keys[0] if keys else None),
    }


def sample_row(row: dict, keys: list[str], reference, candidate, details: dict) -> dict:
    """One pair of the page: its values, texts and displayed details (`details`: metric -> `compact_detail`, or None
    for a metric with no detail for this pair)."""
    return {
        "id": row["id"],
        "values": [row.get(k) for k in keys],
        "reference": cut(reference),
        "candidate": cut(candidate),
        "details": {m: d for m, d in details.items() if d is not None},
    }


def sample_data(
    per_sample: list[dict],
    keys: list[str],
    references,
    candidates,
    details: dict,
    directions: dict,
    sort_key: str | None = None,
) -> dict:
    """The page's data: per pair its values, texts and displayed details; `sort_key` (default: the first key) orders
    the pair table worst first when the page opens."""
    compacted = {metric: [compact_detail(metric, d) for d in rows] for metric, rows in (details or {}).items() if rows}
    rows = [
        sample_row(row, keys, ref, cand, {m: d[i] for m, d in compacted.items()})
        for i, (row, ref, cand) in enumerate(zip(per_sample, references, candidates))
    ]
    return {**sample_header(keys, directions, sort_key), "rows": rows}


def render_score_report(
    result,
    references,
    candidates,
    title: str = REPORT_TITLE,
    baselines: str = "",
    sort_key: str | None = None,
) -> str:
    """The summary with each key's signature, then the baselines (HTML, when computed), then the pairs with their texts
    (worst first on `sort_key`, by default the first key the user named), then the distributions. A streamed run's
    page, which embeds only some pairs, is written by `write_streamed_page` (run_output.write_streamed_report)."""
    keys = list(result.summary)
    values = {k: [row.get(k) for row in result.per_sample] for k in keys}
    body = score_report_body(result, values, len(result.per_sample), baselines, sort_key)
    data = sample_data(
        result.per_sample,
        keys,
        references,
        candidates,
        result.details,
        result.higher_is_better,
        sort_key or getattr(result, "first_key", None),
    )
    return page(title, body, data)


def score_report_body(result, values: dict, embedded_pairs: int, baselines: str = "", sort_key=None) -> str:
    """The page's body: the summary, signatures, baselines, the pair table's section and the distributions of
    `values` (every key's values over all pairs), saying when the table holds only `embedded_pairs` of them."""
    keys = list(result.summary)
    total = len(next(iter(values.values()), ()))
    distributions = "".join(histogram_svg(values[k], k) for k in keys)
    embedded = (
        ""
        if embedded_pairs == total
        else f" The pair table holds the {embedded_pairs:,} worst on {sort_key}; per_sample.jsonl holds all."
    )
    return (
        f"<h2>Summary</h2><p>{total} pairs; 95% percentile bootstrap intervals.{html.escape(embedded)}</p>"
        f'<div class="frame">{summary_table(result.summary)}</div>'
        f"{signatures_list(getattr(result, 'signatures', {}))}{baselines}"
        f'{SAMPLES_SECTION}<h2>Distributions</h2><div class="hists">{distributions}</div>'
    )


def write_score_report(
    result, out: Path, references, candidates, baselines: str = "", sort_key: str | None = None
) -> Path:
    path = Path(out) / "report.html"
    write_text(path, render_score_report(result, references, candidates, baselines=baselines, sort_key=sort_key))
    return path


def write_compare_report(
    out: Path, names: tuple[str, str], comparison: dict, result, n: int, references, system_a, system_b
) -> Path:
    """Both systems' summaries side by side with the paired differences, then each pair with A's and B's values."""
    rows = []
    for key, c in comparison.items():
        if not c.get("n"):
            rows.append(
                f"<tr><td>{html.escape(key)}</td><td colspan=5>no pair scored by both</td>"
                f"<td>{c['a_not_scored']} / {c['b_not_scored']}</td></tr>"
            )
            continue
        rows.append(
            f"<tr><td>{html.escape(key)}</td><td>{c['a']:.4f}</td><td>{c['b']:.4f}</td><td>{c['difference']:+.4f}</td><td>[{c['ci95'][0]:+.4f},"
            f" {c['ci95'][1]:+.4f}]</td><td>{c['p_value']:.4f}</td><td>{c['n']} ({c['a_not_scored']} /"
            f" {c['b_not_scored']} lost)</td></tr>"
        )
    a, b = (html.escape(x) for x in names)
    table = (
        f"<table><thead><tr><th>score</th><th>{a}</th><th>{b}</th><th>{a} − {b}</th><th>95% CI (paired"
        " bootstrap)</th><th>p (approx. randomisation)</th><th>pairs both"
        f" scored</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    keys = [f"{k} ({tag})" for k in result.summary for tag in names]
    per_sample = [
        {
            "id": result.per_sample[i]["id"].removesuffix(" (A)"),
            **{f"{k} ({names[0]})": result.per_sample[i].get(k) for k in result.summary},
            **{f"{k} ({names[1]})": result.per_sample[n + i].get(k) for k in result.summary},
        }
        for i in range(n)
    ]
    candidates = [f"{names[0]}: {cut(x)}\n\n{names[1]}: {cut(y)}" for x, y in zip(system_a, system_b)]
    directions = {f"{k} ({tag})": result.higher_is_better[k] for k in result.summary for tag in names}
    body = (
        f"<h2>{a} against {b}</h2><p>{n} pairs; each key over the pairs both systems scored.</p>{table}"
        f"{signatures_list(getattr(result, 'signatures', {}))}{SAMPLES_SECTION}"
    )
    path = Path(out) / "report.html"
    write_text(
        path,
        page(
            f"radmetrics compare: {names[0]} vs {names[1]}",
            body,
            sample_data(per_sample, keys, references, candidates, {}, directions),
        ),
    )
    return path


def write_figures_report(out: Path, title: str, intro: str, figures: list[tuple[str, Path]]) -> Path:
    """A page of PNG figures embedded as data URIs (meta-eval's scatter plots), each with its caption."""
    blocks = "".join(
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,'
        f'{base64.b64encode(Path(png).read_bytes()).decode()}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        for caption, png in figures
    )
    path = Path(out) / "report.html"
    path.write_text(page(title, f'<p>{html.escape(intro)}</p><div class="hists">{blocks}</div>'), encoding="utf-8")
    return path


def _resource(name: str) -> str:
    return (RESOURCES / name).read_text(encoding="utf-8").rstrip("\n")


# The page's fixed parts, kept as files of their own languages and inlined, so that the page stays self-contained.
SAMPLES_SECTION = _resource("pairs_section.html")
STYLE = _resource("report.css")
SCRIPT = "\n" + _resource("report.js") + "\n"
