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

from ..loading.released import ARTEFACTS
from .stats import EXACT_95_TAILS, bootstrap_differences, percentile_interval

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


def baseline_candidates(
    references: list[str], template: str = DEFAULT_TEMPLATE, seed: int = 0
) -> dict[str, list[str]]:
    order = derangement(references, seed)
    return {SHUFFLED: [references[k] for k in order], TEMPLATE: [template] * len(references)}


def paired_difference(system, baseline, key: str, n_resamples: int = 1000, seed: int = 0) -> dict:
    """System minus baseline on `key` over the same pairs, with a paired 95% bootstrap interval."""
    n = len(system.per_sample)
    value = system.aggregate(key, np.arange(n)) - baseline.aggregate(key, np.arange(n))
    boots = bootstrap_differences(
        lambda idx: system.aggregate(key, idx),
        lambda idx: baseline.aggregate(key, idx),
        n,
        n_resamples,
        np.random.default_rng(seed),
    )
    interval = [None, None] if np.isnan(boots).all() else percentile_interval(boots, EXACT_95_TAILS)
    return {"difference": float(value), "ci95": interval}


def score_baselines(scorer, references: list[str], system, template: str = DEFAULT_TEMPLATE, seed: int = 0) -> dict:
    """{baseline: {"candidate", key: {"value", "ci95", "system_minus_baseline"}}} for every key of `system`, and under
    "rexrank" the published ReXrank rows when the references are a ReXrank IU X-ray split (`rexrank_rows`)."""
    report = {}
    for name, candidates in baseline_candidates(references, template, seed).items():
        result = scorer(references, candidates)
        entry = {"candidate": template if name == TEMPLATE else "each reference scored against another one (seeded)"}
        for key in system.summary:
            entry[key] = {
                "value": result.summary[key]["value"],
                "ci95": result.summary[key]["ci95"],
                "system_minus_baseline": paired_difference(system, result, key, scorer.n_bootstrap, seed),
            }
        report[name] = entry
    published = rexrank_rows(scorer, references)
    if published:
        report["rexrank"] = published
    return report


def standing(system_summary: dict, baselines: dict, key: str) -> str:
    """Where the system stands against each baseline on `key`: better, WORSE, or not distinguishable from it (the
    paired interval of the difference, oriented by the key's direction, above 0, below 0, or holding 0)."""
    direction = 1 if system_summary[key].get("higher_is_better", True) else -1
    words = []
    for name, entry in baselines.items():
        if name == "rexrank":
            continue
        low, high = entry[key]["system_minus_baseline"]["ci95"]
        if low is None:
            words.append(f"{name}: n/a")
            continue
        low, high = sorted((direction * low, direction * high))
        words.append(
            f"better than {name}"
            if low > 0
            else f"WORSE than {name}"
            if high < 0
            else f"not distinguishable from {name}"
        )
    return "; ".join(words)


def _value(entry: dict) -> str:
    value, (low, high) = entry.get("value"), entry.get("ci95") or (None, None)
    if value is None:
        return "n/a"
    return f"{value:.4f}" + (f" [{low:.4f}, {high:.4f}]" if low is not None and high is not None else "")


def published_range(published: dict | None, key: str) -> str:
    """The published ReXrank systems' range on `key`, where the run is comparable with them."""
    if not published or key not in published["comparable_keys"]:
        return ""
    values = sorted(row["values"][key] for row in published["rows"])
    return f"{values[0]:.3f} to {values[-1]:.3f} ({len(values)} systems)"


def baselines_table(system_summary: dict, baselines: dict, published: dict | None = None) -> str:
    """Markdown: each key's value beside each baseline's, the published ReXrank range where comparable, and where the
    system stands."""
    names = [name for name in baselines if name != "rexrank"]
    extra = [f"ReXrank IU X-ray {published['split']} (published)"] if published else []
    lines = [
        f"| score | system | {' | '.join([*names, *extra])} | standing |",
        "|---|---|" + "---|" * (len(names) + len(extra)) + "---|",
    ]
    for key, entry in system_summary.items():
        cells = [_value(baselines[name][key]) for name in names] + (
            [published_range(published, key)] if published else []
        )
        lines.append(f"| {key} | {_value(entry)} | {' | '.join(cells)} | {standing(system_summary, baselines, key)} |")
    return "\n".join(lines)


def baselines_html(system_summary: dict, baselines: dict) -> str:
    import html

    names = [name for name in baselines if name != "rexrank"]
    published = baselines.get("rexrank")
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    if published:
        head += f"<th>ReXrank IU X-ray {html.escape(published['split'])} (published)</th>"
    rows = "".join(
        f"<tr><td>{html.escape(key)}</td><td>{_value(entry)}</td>"
        + "".join(f"<td>{_value(baselines[n][key])}</td>" for n in names)
        + (f"<td>{published_range(published, key)}</td>" if published else "")
        + f"<td>{html.escape(standing(system_summary, baselines, key))}</td></tr>"
        for key, entry in system_summary.items()
    )
    described = "; ".join(f"{name}: {baselines[name]['candidate']}" for name in names)
    if published:
        described += f"; {published['source']}, only where the run's configuration is ReXrank's"
    return (
        f"<h2>Baselines</h2><p>The same metrics on your references with naive candidates ({html.escape(described)}). "
        "Standing: the paired 95% interval of the system's difference from each.</p>"
        f"<table><thead><tr><th>score</th><th>system</th>{head}<th>standing</th></tr></thead><tbody>{rows}</tbody></table>"
    )


# ReXrank's published IU X-ray rows (rajpurkarlab/ReXrank; CXR-Report-Metric's code): each column, the radmetrics key
# that computes it, and what that key's metric must be given for the value to be comparable.
REXRANK_SPLITS = {"test": 590, "valid": 296}
REXRANK_COLUMNS = {
    "BLEU": "bleu2",
    "BertScore": "bertscore",
    "SembScore": "chexbert_similarity",
    "RadGraph": "radgraph_radcliq",
    "RadCliQ-v0": "radcliq_v0",
    "RadCliQ-v1": "radcliq_v1",
}
REXRANK_SETTINGS = {  # metric -> (options it must have, components it must be the released originals of)
    "bleu2": ({}, ()),
    "bertscore": (
        {
            "model": "distilroberta-base",
            "idf": True,
            "rescale_with_baseline": True,
            "precision": "fp32",
            "baseline_path": None,
        },
        (),
    ),
    "chexbert": ({"uncertain_as_positive": True, "precision": "fp32"}, ("chexbert",)),
    "radgraph": ({"precision": "fp32"}, ("radgraph",)),
}


def _normalised(text: str) -> str:
    return " ".join(str(text).lower().split())


def rexrank_split(references: list[str]) -> str | None:
    """ "test" or "valid" when the references are exactly that ReXrank IU X-ray split's reports (each study's report,
    its findings, or its findings and impression), one per study; else None."""
    return _match_split(references) if references else None


def _match_split(references) -> str | None:
    import json
    from importlib.resources import files

    for split, size in REXRANK_SPLITS.items():
        if len(references) != size:
            continue
        path = files("radmetrics.inference").joinpath("resources", "rexrank", f"rexrank_iu_xray_{split}.json")
        studies = json.loads(path.read_text(encoding="utf-8"))
        texts = {}
        for study in studies.values():
            findings, impression = study.get("section_findings") or "", study.get("section_impression") or ""
            for text in (study.get("report"), findings, f"{findings} {impression}"):
                if text and text.strip():
                    texts.setdefault(_normalised(text), set()).add(id(study))
        matched = set()
        for reference in references:
            owners = texts.get(_normalised(reference), set()) - matched
            if not owners:
                break
            matched.add(next(iter(owners)))
        else:
            return split
    return None


def rexrank_comparable(metric) -> bool:
    """Whether `metric` (an instance) runs in ReXrank's configuration (CXR-Report-Metric's models and settings)."""
    if metric.name == "radcliq":
        return (
            not metric.options.get("constants")
            and not metric.options.get("radgraph_model")
            and not metric.options.get("bertscore_model")
        )
    options, components = REXRANK_SETTINGS.get(metric.name, (None, ()))
    if options is None or any(metric.options.get(k) != v for k, v in options.items()):
        return False
    if metric.name == "bertscore" and metric.options.get("num_layers") not in (
        None,
        5,
    ):  # bert-score's 5 for distilroberta
        return False
    for kind in components:
        given = str(metric.components.get(kind, ""))
        if given != kind and not given.endswith("/" + (ARTEFACTS[kind].filename or "")):
            return False
    return True


def rexrank_rows(scorer, references: list[str]) -> dict | None:
    """{"split", "rows": [{model, institution, values}], "comparable_keys"} when the references are a ReXrank IU X-ray
    split and at least one key runs in ReXrank's configuration; else None."""
    import csv
    from importlib.resources import files

    split = rexrank_split(references)
    if split is None:
        return None
    metrics = {m.name: m for m in scorer.metrics()}
    comparable = {}
    for column, key in REXRANK_COLUMNS.items():
        owner = next((m for m in metrics.values() if key in m.keys), None)
        composite_ok = owner is not None and all(
            rexrank_comparable(metrics[d]) for d in owner.dependencies(owner.options) if d in metrics
        )
        if owner is not None and rexrank_comparable(owner) and composite_ok:
            comparable[key] = column
    if not comparable:
        return None
    text = files("radmetrics.inference").joinpath("resources", "rexrank", f"rexrank_leaderboard_iu_xray_{split}.csv")
    rows = list(csv.DictReader(text.read_text(encoding="utf-8").splitlines()))
    return {
        "split": split,
        "source": "ReXrank leaderboard, IU X-ray (rajpurkarlab/ReXrank @ 8152f99), published figures",
        "comparable_keys": comparable,
        "rows": [
            {
                "model": r["Model Name"],
                "institution": r["Institution"],
                "values": {key: float(r[column]) for key, column in comparable.items()},
            }
            for r in rows
        ],
    }
