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
