"""Naive baselines on the user's own references, scored with the same metrics, so that a score can be read.

- "another patient's report": each reference's candidate is another reference, by a seeded derangement that never
  pairs a report with itself or with an identical text (IU X-ray repeats many normal reports word for word);
- "normal template": one fixed normal report for every pair ("No acute cardiopulmonary process." by default).

For each key the system is compared with each baseline on the same pairs: the difference with a paired 95% bootstrap
interval (the same resampled pairs on both sides; corpus-level keys recomputed per resample). Each baseline costs one
more scoring of every pair, so `radmetrics score --baselines` roughly triples the time; it is off by default.
"""

from __future__ import annotations

import numpy as np

DEFAULT_TEMPLATE = "No acute cardiopulmonary process."
SHUFFLED = "another patient's report"
TEMPLATE = "normal template"


class BaselineError(ValueError):
    pass


def derangement(references: list[str], seed: int = 0) -> list[int]:
    """For each pair, the index of another reference whose text differs from its own (seeded)."""
    n = len(references)
    texts = [" ".join(str(r).split()).lower() for r in references]
    if len(set(texts)) < 2:
        raise BaselineError("the shuffled-reference baseline needs at least two different references")
    rng = np.random.default_rng(seed)
    for _ in range(100):
        order = rng.permutation(n)
        bad = [i for i in range(n) if texts[order[i]] == texts[i]]
        for i in bad:  # repair by swapping with a position that takes both texts
            for j in rng.permutation(n):
                if texts[order[j]] != texts[i] and texts[order[i]] != texts[j]:
                    order[i], order[j] = order[j], order[i]
                    break
        if all(texts[order[i]] != texts[i] for i in range(n)):
            return [int(k) for k in order]
    raise BaselineError("no derangement found that avoids identical texts (nearly all references are the same report)")


def baseline_candidates(references: list[str], template: str = DEFAULT_TEMPLATE, seed: int = 0) -> dict[str, list[str]]:
    order = derangement(references, seed)
    return {SHUFFLED: [references[k] for k in order], TEMPLATE: [template] * len(references)}


def paired_difference(system, baseline, key: str, n_resamples: int = 1000, seed: int = 0) -> dict:
    """System minus baseline on `key` over the same pairs, with a paired 95% bootstrap interval."""
    n = len(system.per_sample)
    value = system.aggregate(key, np.arange(n)) - baseline.aggregate(key, np.arange(n))
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        boots.append(system.aggregate(key, idx) - baseline.aggregate(key, idx))
    boots = np.asarray(boots, dtype=float)
    boots = boots[~np.isnan(boots)]
    interval = [float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))] if len(boots) else [None, None]
    return {"difference": float(value), "ci95": interval}


def score_baselines(scorer, references: list[str], system, template: str = DEFAULT_TEMPLATE, seed: int = 0) -> dict:
    """{baseline: {"candidates", key: {"value", "ci95", "system_minus_baseline"}}} for every key of `system`."""
    report = {}
    for name, candidates in baseline_candidates(references, template, seed).items():
        result = scorer(references, candidates)
        entry = {"candidate": template if name == TEMPLATE else "each reference scored against another one (seeded)"}
        for key in system.summary:
            entry[key] = {"value": result.summary[key]["value"], "ci95": result.summary[key]["ci95"],
                          "system_minus_baseline": paired_difference(system, result, key, scorer.n_bootstrap or 200, seed)}
        report[name] = entry
    return report


def standing(system_summary: dict, baselines: dict, key: str) -> str:
    """Where the system stands against each baseline on `key`: better, WORSE, or not distinguishable from it (the
    paired interval of the difference, oriented by the key's direction, above 0, below 0, or holding 0)."""
    direction = 1 if system_summary[key].get("higher_is_better", True) else -1
    words = []
    for name, entry in baselines.items():
        low, high = entry[key]["system_minus_baseline"]["ci95"]
        if low is None:
            words.append(f"{name}: n/a")
            continue
        low, high = sorted((direction * low, direction * high))
        words.append(f"better than {name}" if low > 0 else f"WORSE than {name}" if high < 0 else
                     f"not distinguishable from {name}")
    return "; ".join(words)


def _value(entry: dict) -> str:
    value, (low, high) = entry.get("value"), entry.get("ci95") or (None, None)
    if value is None:
        return "n/a"
    return f"{value:.4f}" + (f" [{low:.4f}, {high:.4f}]" if low is not None and high is not None else "")


def baselines_table(system_summary: dict, baselines: dict) -> str:
    """Markdown: each key's value beside each baseline's, and where the system stands."""
    names = list(baselines)
    lines = [f"| score | system | {' | '.join(names)} | standing |", "|---|---|" + "---|" * len(names) + "---|"]
    for key, entry in system_summary.items():
        cells = [_value(baselines[name][key]) for name in names]
        lines.append(f"| {key} | {_value(entry)} | {' | '.join(cells)} | {standing(system_summary, baselines, key)} |")
    return "\n".join(lines)


def baselines_html(system_summary: dict, baselines: dict) -> str:
    import html

    names = list(baselines)
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    rows = "".join(f"<tr><td>{html.escape(key)}</td><td>{_value(entry)}</td>"
                   + "".join(f"<td>{_value(baselines[n][key])}</td>" for n in names)
                   + f"<td>{html.escape(standing(system_summary, baselines, key))}</td></tr>"
                   for key, entry in system_summary.items())
    described = "; ".join(f"{name}: {baselines[name]['candidate']}" for name in names)
    return (f"<h2>Baselines</h2><p>The same metrics on your references with naive candidates ({html.escape(described)}). "
            "Standing: the paired 95% interval of the system's difference from each.</p>"
            f"<table><thead><tr><th>score</th><th>system</th>{head}<th>standing</th></tr></thead><tbody>{rows}</tbody></table>")
