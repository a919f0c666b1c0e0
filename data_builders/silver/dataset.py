"""`radmetrics data silver`: silver labels for the encoder recipes, with a dataset card.

Writes under OUT/:
- `chexpert/`  one record per report: `id`, `text`, `labels` {observation: 1 / 0 / -1 / null} (rule labeler)
- `rate_ner/`  one record per sentence: `id`, `report_id`, `tokens`, `ner_tags` (IOB), `spans` [start, end, type]
- `radgraph/`  one DyGIE document per report: `doc_key`, `sentences`, `ner`, `relations`
each as `{split}.jsonl` and an HF DatasetDict under `hf/`, plus `stats.json` and a `README.md` card with
counts per split, the overlap between splits (leakage.py), label distributions and the agreement of each
labeler with real gold where it exists (CheXpert-style labels vs NegBio's manual IU labels; RadGraph-style
output vs the radgraph package's gold, in-sample because the lexicon was developed on those reports).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from radmetrics.inference.files import atomic
from radmetrics.inference.text.sentences import split_sentences

from ..corpus.corpora import Report
from ..corpus.corpus_io import texts_by_split, write_split_records
from ..corpus.leakage import overlap_card_section, split_overlap

LABELERS = ("chexpert", "rate_ner", "radgraph")


def _chexpert_records(report: Report, sentences: list[str]) -> list[dict]:
    from .rule_labeler import label_report

    return [{"id": report.id, "text": report.text, "labels": label_report(report.text)}]


def _rate_ner_records(report: Report, sentences: list[str]) -> list[dict]:
    from .ner import tag_sentence

    return [{"id": f"{report.id}#{n}", "report_id": report.id, **tag_sentence(s)} for n, s in enumerate(sentences)]


def _radgraph_records(report: Report, sentences: list[str]) -> list[dict]:
    from .radgraph import extract_document

    return [extract_document(report.id, sentences)]


BUILDERS = {"chexpert": _chexpert_records, "rate_ner": _rate_ner_records, "radgraph": _radgraph_records}


def _span_structs(spans: list[list]) -> list[dict]:
    return [{"start": s[0], "end": s[1], "label": s[2]} for s in spans]


def _relation_structs(relations: list[list]) -> list[dict]:
    return [
        {"source_start": a, "source_end": b, "target_start": c, "target_end": d, "label": label}
        for a, b, c, d, label in relations
    ]


ARROW_LAYOUT = {  # the HF copy writes [start, end, label] lists as structs; the JSONL keeps the DESIGN layout
    "chexpert": None,
    "rate_ner": lambda r: {**r, "spans": _span_structs(r["spans"])},
    "radgraph": lambda r: {
        **r,
        "ner": [_span_structs(s) for s in r["ner"]],
        "relations": [_relation_structs(s) for s in r["relations"]],
    },
}


def label_distribution(labeler: str, records: list[dict]) -> dict:
    if labeler == "chexpert":
        names = {"1": "positive", "0": "negative", "-1": "uncertain", "None": "blank"}
        table: dict[str, Counter] = {}
        for r in records:
            for name, value in r["labels"].items():
                table.setdefault(name, Counter())[names[str(value)]] += 1
        return {name: dict(c) for name, c in table.items()}
    if labeler == "rate_ner":
        return {
            "entities": dict(Counter(s[2] for r in records for s in r["spans"])),
            "sentences_without_entities": sum(not r["spans"] for r in records),
        }
    return {
        "entities": dict(Counter(e[2] for r in records for sent in r["ner"] for e in sent)),
        "relations": dict(Counter(x[4] for r in records for sent in r["relations"] for x in sent)),
    }


def gold_agreement(labeler: str, corpus_kind: str) -> dict | None:
    if labeler == "chexpert" and corpus_kind == "iu_xray":
        from ..agreement.labeler import f1_against_negbio

        return {"gold": "NegBio manual labels on IU X-ray (labels shared with CheXpert)", **f1_against_negbio()}
    if labeler == "radgraph":
        from ..agreement.radgraph import GOLD_DESCRIPTION, agreement_with_gold

        return {"gold": GOLD_DESCRIPTION, **agreement_with_gold()}
    return None


def write_silver(
    reports: list[Report],
    splits: dict[str, str],
    out_dir: str | Path,
    labelers=LABELERS,
    provenance: dict | None = None,
    sentence_method: str = "robust",
    progress: bool = True,
) -> dict:
    unknown = sorted(set(labelers) - set(BUILDERS))
    if unknown:
        raise ValueError(f"unknown silver labeler(s) {unknown}; choose from {list(BUILDERS)}")
    provenance = provenance or {}
    out = Path(out_dir)
    by_labeler: dict[str, dict[str, list[dict]]] = {name: {} for name in labelers}
    iterator = reports
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(reports, desc="silver labels", unit="report")
    for report in iterator:
        sentences = split_sentences(report.text, sentence_method)
        for name in labelers:
            by_labeler[name].setdefault(splits[report.id], []).extend(BUILDERS[name](report, sentences))
    stats: dict = {
        "reports": len(reports),
        "provenance": provenance,
        "split_overlap": split_overlap(texts_by_split(reports, splits), sentence_method),
        "labelers": {},
    }
    for name, by_split in by_labeler.items():
        write_split_records(by_split, out / name, to_arrow=ARROW_LAYOUT[name])
        records = [r for rs in by_split.values() for r in rs]
        stats["labelers"][name] = {
            "records_per_split": {s: len(rs) for s, rs in by_split.items()},
            "label_distribution": label_distribution(name, records),
            "gold_agreement": gold_agreement(name, provenance.get("corpus", "")),
        }
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out / "stats.json", json.dumps(stats, indent=2))
    atomic.write_text(out / "README.md", render_card(stats))
    return stats


def _agreement_table(agreement: dict) -> str:
    if "per_label" in agreement:
        rows = [(label, v) for label, v in agreement["per_label"].items()]
    else:
        rows = [(name, agreement[name]) for name in ("entities", "entity_spans", "relations")]
    lines = ["| | precision | recall | F1 |", "|---|---|---|---|"]
    lines += [f"| {name} | {v['precision']:.3f} | {v['recall']:.3f} | {v['f1']:.3f} |" for name, v in rows]
    return "\n".join(lines)


def _agreement_text(agreement: dict) -> str:
    if agreement.get("in_sample"):
        return f"In-sample agreement with {agreement['gold']}:\n\n{_agreement_table(agreement)}\n\n{agreement['note']}"
    return f"Agreement with {agreement['gold']}:\n\n{_agreement_table(agreement)}"


def _distribution_text(labeler: str, distribution: dict) -> str:
    if labeler != "chexpert":
        return f"```json\n{json.dumps(distribution, indent=1)}\n```"
    columns = ("positive", "negative", "uncertain", "blank")
    lines = ["| observation | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    lines += [
        f"| {name} | " + " | ".join(str(counts.get(c, 0)) for c in columns) + " |"
        for name, counts in distribution.items()
    ]
    return "\n".join(lines)


def render_card(stats: dict) -> str:
    sections = []
    for name, s in stats["labelers"].items():
        agreement = s["gold_agreement"]
        measured = (
            _agreement_text(agreement)
            if agreement
            else "No gold labels exist for this labeler on this corpus; its labels are unmeasured silver."
        )
        sections.append(
            f"## {name}\n\nRecords per split: `{json.dumps(s['records_per_split'])}`\n\n"
            f"Label distribution:\n\n{_distribution_text(name, s['label_distribution'])}\n\n{measured}\n"
        )
    return (
        "---\ntags: [radiology, radmetrics, silver-labels]\n---\n# radmetrics silver labels\n\n"
        "Rule- and lexicon-based labels for the encoder recipes (`radmetrics data silver`): a CheXpert-style rule "
        "labeler, a RaTE-NER tagger (IOB and spans) and a RadGraph-style extractor (DyGIE JSONL). Every record "
        f"of a report lands in the report's split.\n\nProvenance: `{json.dumps(stats['provenance'])}`; "
        f"{stats['reports']} reports.\n\n{overlap_card_section(stats['split_overlap'])}\n" + "\n".join(sections)
    )
