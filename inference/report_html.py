"""`report.html`: one self-contained page per scoring run (no server, no network, no external script or font).

It shows the summary with intervals, each key's distribution (an SVG histogram drawn here), and a per-sample table
that sorts (click a header), filters (text in either report or the id; a key's range, e.g. `KEY<0.3`) and pages
through 100 rows at a time, so 10,000 pairs stay quick to open. A row opens its pair: both reports and each metric's
detail as its metric class's `display_detail` draws it (notes, entities coloured matched or not, tables, texts), cut
to keep the file small. `radmetrics compare` adds both systems side by side with the paired differences; `meta-eval` adds its scatter plots.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path

from .json_io import strict
from .metrics.display import cut, json_detail

BINS = 20


def compact_detail(metric: str, detail: dict | None):
    """What the page shows of one metric's per-pair detail: the metric class's `display_detail` (see metrics/display.py
    for the parts), or the error when the pair was not scored."""
    from .registry import metrics

    if not isinstance(detail, dict):
        return None
    if "error" in detail:
        return {"error": cut(detail["error"]), **({"response": cut(detail["response"])} if detail.get("response") else {})}
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
    bars = "".join(f'<rect x="{4 + i * 14}" y="{84 - 80 * c / top:.1f}" width="12" height="{80 * c / top:.1f}"><title>'
                   f'[{low + i * width:.3g}, {low + (i + 1) * width:.3g}): {c}</title></rect>' for i, c in enumerate(counts))
    return (f'<figure><svg viewBox="0 0 290 100" width="290" height="100" role="img" aria-label="{html.escape(key)} histogram">{bars}'
            f'<text x="4" y="98">{low:.3g}</text><text x="286" y="98" text-anchor="end">{high:.3g}</text></svg>'
            f"<figcaption>{html.escape(key)} (n={len(finite)})</figcaption></figure>")


def signatures_list(signatures: dict) -> str:
    if not signatures:
        return ""
    items = "".join(f"<li><code>{html.escape(sig)}</code></li>" for sig in signatures.values())
    return (f"<details open><summary>Signatures: everything that changes each value (compare scores only where they "
            f"match)</summary><ul class=\"sigs\">{items}</ul></details>")


def summary_table(summary: dict) -> str:
    def number(value):
        return "n/a" if value is None else f"{value:.4f}"

    rows = []
    for key, s in summary.items():
        low, high = (s.get("ci95") or [None, None])[:2]
        interval = "n/a" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"
        warning = f'<span class="warn">{html.escape(s["warning"])}</span>' if s.get("warning") else ""
        rows.append(f"<tr><td>{html.escape(key)}</td><td>{'↑' if s.get('higher_is_better') else '↓'}</td><td>{number(s.get('value'))}</td>"
                    f"<td>{interval}</td><td>{s.get('n', '')}</td><td>{s.get('not_scored', 0)}</td><td>{s.get('empty_candidates', 0)}</td>"
                    f"<td>{warning}</td></tr>")
    return ("<table><thead><tr><th>score</th><th>better</th><th>value</th><th>95% CI</th><th>n</th><th>not scored</th>"
            "<th>empty candidates</th><th></th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def page(title: str, body: str, data: dict | None = None) -> str:
    payload = "" if data is None else (
        '<script id="data" type="application/json">' + json.dumps(strict(data), allow_nan=False).replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e") + "</script>"
        f"<script>{SCRIPT}</script>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
            f"<body><h1>{html.escape(title)}</h1>{body}{payload}</body></html>")


def sample_data(per_sample: list[dict], keys: list[str], references, candidates, details: dict, directions: dict,
                sort_key: str | None = None) -> dict:
    """The page's data: per pair its values, texts and displayed details; `sort_key` (default: the first key) orders
    the pair table worst first when the page opens."""
    compacted = {metric: [compact_detail(metric, d) for d in rows] for metric, rows in (details or {}).items() if rows}
    sort_key = sort_key if sort_key in keys else (keys[0] if keys else None)
    return {"keys": keys, "higher_is_better": {k: directions.get(k, True) for k in keys}, "sort_key": sort_key,
            "rows": [{"id": row["id"], "values": [row.get(k) for k in keys], "reference": cut(ref), "candidate": cut(cand),
                      "details": {m: d[i] for m, d in compacted.items() if d[i] is not None}}
                     for i, (row, ref, cand) in enumerate(zip(per_sample, references, candidates))]}


def render_score_report(result, references, candidates, title: str = "radmetrics scores", baselines: str = "",
                        sort_key: str | None = None) -> str:
    """The summary with each key's signature, then the baselines (HTML, when computed), then the pairs with their texts
    (worst first on `sort_key`), then the distributions."""
    keys = list(result.summary)
    distributions = "".join(histogram_svg([row.get(k) for row in result.per_sample], k) for k in keys)
    body = (f"<h2>Summary</h2><p>{len(result.per_sample)} pairs; 95% percentile bootstrap intervals.</p>"
            f"{summary_table(result.summary)}{signatures_list(getattr(result, 'signatures', {}))}{baselines}"
            f'{SAMPLES_SECTION}<h2>Distributions</h2><div class="hists">{distributions}</div>')
    return page(title, body, sample_data(result.per_sample, keys, references, candidates, result.details,
                                         result.higher_is_better, sort_key))


def write_score_report(result, out: Path, references, candidates, baselines: str = "", sort_key: str | None = None) -> Path:
    path = Path(out) / "report.html"
    path.write_text(render_score_report(result, references, candidates, baselines=baselines, sort_key=sort_key),
                    encoding="utf-8")
    return path


def write_compare_report(out: Path, names: tuple[str, str], comparison: dict, result, n: int, references, system_a, system_b) -> Path:
    """Both systems' summaries side by side with the paired differences, then each pair with A's and B's values."""
    rows = []
    for key, c in comparison.items():
        if not c.get("n"):
            rows.append(f"<tr><td>{html.escape(key)}</td><td colspan=5>no pair scored by both</td>"
                        f"<td>{c['a_not_scored']} / {c['b_not_scored']}</td></tr>")
            continue
        rows.append(f"<tr><td>{html.escape(key)}</td><td>{c['a']:.4f}</td><td>{c['b']:.4f}</td><td>{c['difference']:+.4f}</td>"
                    f"<td>[{c['ci95'][0]:+.4f}, {c['ci95'][1]:+.4f}]</td><td>{c['p_value']:.4f}</td><td>{c['n']} ({c['a_not_scored']} / "
                    f"{c['b_not_scored']} lost)</td></tr>")
    a, b = (html.escape(x) for x in names)
    table = (f"<table><thead><tr><th>score</th><th>{a}</th><th>{b}</th><th>{a} − {b}</th><th>95% CI (paired bootstrap)</th>"
             f"<th>p (approx. randomisation)</th><th>pairs both scored</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    keys = [f"{k} ({tag})" for k in result.summary for tag in names]
    per_sample = [{"id": result.per_sample[i]["id"].removesuffix(" (A)"),
                   **{f"{k} ({names[0]})": result.per_sample[i].get(k) for k in result.summary},
                   **{f"{k} ({names[1]})": result.per_sample[n + i].get(k) for k in result.summary}} for i in range(n)]
    candidates = [f"{names[0]}: {cut(x)}\n\n{names[1]}: {cut(y)}" for x, y in zip(system_a, system_b)]
    directions = {f"{k} ({tag})": result.higher_is_better[k] for k in result.summary for tag in names}
    body = (f"<h2>{a} against {b}</h2><p>{n} pairs; each key over the pairs both systems scored.</p>{table}"
            f"{signatures_list(getattr(result, 'signatures', {}))}{SAMPLES_SECTION}")
    path = Path(out) / "report.html"
    path.write_text(page(f"radmetrics compare: {names[0]} vs {names[1]}", body,
                         sample_data(per_sample, keys, references, candidates, {}, directions)), encoding="utf-8")
    return path


def write_figures_report(out: Path, title: str, intro: str, figures: list[tuple[str, Path]]) -> Path:
    """A page of PNG figures embedded as data URIs (meta-eval's scatter plots), each with its caption."""
    blocks = "".join(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,'
                     f'{base64.b64encode(Path(png).read_bytes()).decode()}"><figcaption>{html.escape(caption)}</figcaption></figure>'
                     for caption, png in figures)
    path = Path(out) / "report.html"
    path.write_text(page(title, f"<p>{html.escape(intro)}</p><div class=\"hists\">{blocks}</div>"), encoding="utf-8")
    return path


SAMPLES_SECTION = """<h2>Pairs</h2><p>Worst first on the first key; click a header to sort, a row to open the pair.</p><p><input id="filter" size="50" placeholder="filter: words in a report or the id; or key<0.3, key>=1">
<span id="count"></span> <button id="prev">◀</button> <span id="pageno"></span> <button id="next">▶</button></p>
<table id="samples"><thead></thead><tbody></tbody></table><section id="detail" hidden></section>"""

STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f2f2f2;cursor:pointer}
tbody tr:hover{background:#f7f7ff}.hists{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}rect{fill:#4a78c2}
.warn{color:#b00}.chip{display:inline-block;border-radius:3px;padding:1px 5px;margin:2px}.hit{background:#cdeccd}
.miss{background:#f6c9c9}pre{white-space:pre-wrap;background:#fafafa;border:1px solid #eee;padding:6px}
#detail{border-top:2px solid #888;margin-top:1em}.reports{display:flex;gap:1em}.reports>div{flex:1}
td.text{max-width:18em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:#444}
.sigs code{font-size:12px}details{margin:.5em 0}"""

SCRIPT = r"""
const D = JSON.parse(document.getElementById('data').textContent);
const PAGE = 100; let rows = D.rows.map((r, i) => ({...r, index: i})), shown = rows, page = 0, sortKey = null, desc = false;
const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
const fmt = v => v === null || v === undefined ? 'n/a' : (Math.round(v * 10000) / 10000).toString();
const head = document.querySelector('#samples thead'), body = document.querySelector('#samples tbody');
head.innerHTML = '<tr><th data-k="-1">id</th><th>reference</th><th>candidate</th>' +
  D.keys.map((k, i) => `<th data-k="${i}">${esc(k)}</th>`).join('') + '</tr>';
head.onclick = e => { const k = +e.target.dataset.k; if (isNaN(k)) return; desc = sortKey === k ? !desc : true; sortKey = k; apply(); };
function value(r, k) { return k < 0 ? r.id : r.values[k]; }
function apply() {
  const q = document.getElementById('filter').value.trim(), m = q.match(/^(.+?)\s*(<=|>=|<|>|=)\s*(-?[\d.]+)$/);
  if (m && D.keys.includes(m[1])) {
    const k = D.keys.indexOf(m[1]), x = +m[3], op = {'<': (a) => a < x, '<=': (a) => a <= x, '>': (a) => a > x, '>=': (a) => a >= x, '=': (a) => a === x}[m[2]];
    shown = rows.filter(r => r.values[k] !== null && op(r.values[k]));
  } else {
    const t = q.toLowerCase();
    shown = t ? rows.filter(r => (r.id + ' ' + r.reference + ' ' + r.candidate).toLowerCase().includes(t)) : rows;
  }
  if (sortKey !== null) {
    shown = [...shown].sort((a, b) => { const x = value(a, sortKey), y = value(b, sortKey);
      if (x === null) return 1; if (y === null) return -1; return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1); });
  }
  page = 0; draw();
}
function draw() {
  const pages = Math.max(1, Math.ceil(shown.length / PAGE)); page = Math.min(page, pages - 1);
  body.innerHTML = shown.slice(page * PAGE, page * PAGE + PAGE).map(r => `<tr data-i="${r.index}"><td>${esc(r.id)}</td>` +
    `<td class="text" title="${esc(r.reference)}">${esc(r.reference)}</td><td class="text" title="${esc(r.candidate)}">` +
    `${esc(r.candidate)}</td>` + r.values.map(v => `<td>${fmt(v)}</td>`).join('') + '</tr>').join('');
  document.getElementById('count').textContent = `${shown.length} of ${rows.length} pairs`;
  document.getElementById('pageno').textContent = `page ${page + 1} of ${pages}`;
  document.querySelectorAll('#samples th').forEach(th => th.textContent = th.textContent.replace(/ [▲▼]$/, '') +
    (+th.dataset.k === sortKey ? (desc ? ' ▼' : ' ▲') : ''));
}
function chips(list) { return list.length ? list.map(([t, l, hit]) => `<span class="chip ${hit ? 'hit' : 'miss'}">${esc(t)} <small>${esc(l)}</small></span>`).join('') : '<i>none</i>'; }
function table(t) { return (t.caption ? `<p>${esc(t.caption)}</p>` : '') + '<table><tr>' + t.columns.map(c => `<th>${esc(c)}</th>`).join('') +
  '</tr>' + t.rows.map(r => '<tr>' + r.map(v => `<td>${esc(v === null ? '' : v)}</td>`).join('') + '</tr>').join('') + '</table>'; }
function detail(d) {
  if (d.error) return `<p class="warn">not scored: ${esc(d.error)}</p>` + (d.response ? `<pre>${esc(d.response)}</pre>` : '');
  return (d.notes || []).map(n => `<p>${esc(n)}</p>`).join('') +
    (d.entities ? `<div class="reports"><div><b>reference</b><br>${chips(d.entities.reference)}</div><div><b>candidate</b><br>${chips(d.entities.candidate)}</div></div>` : '') +
    (d.tables || []).map(table).join('') +
    (d.texts || []).map(t => (t.caption ? `<p>${esc(t.caption)}:</p>` : '') + `<pre>${esc(t.text)}</pre>`).join('');
}
body.onclick = e => {
  const tr = e.target.closest('tr'); if (!tr) return; const r = rows[+tr.dataset.i], box = document.getElementById('detail');
  box.hidden = false;
  box.innerHTML = `<h2>${esc(r.id)}</h2><div class="reports"><div><b>reference</b><pre>${esc(r.reference)}</pre></div>` +
    `<div><b>candidate</b><pre>${esc(r.candidate)}</pre></div></div>` +
    Object.entries(r.details).map(([m, d]) => `<h3>${esc(m)}</h3>${detail(d)}`).join('');
  box.scrollIntoView();
};
document.getElementById('filter').oninput = apply;
document.getElementById('prev').onclick = () => { page = Math.max(0, page - 1); draw(); };
document.getElementById('next').onclick = () => { page += 1; draw(); };
const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get('filter')) document.getElementById('filter').value = hash.get('filter');
if (hash.get('sort') && D.keys.includes(hash.get('sort'))) { sortKey = D.keys.indexOf(hash.get('sort')); desc = hash.get('order') !== 'asc'; }
else if (D.sort_key !== null && D.sort_key !== undefined) { sortKey = D.keys.indexOf(D.sort_key); desc = !D.higher_is_better[D.sort_key]; }
apply();
"""
