"""How much of each held-out split repeats train: duplicated reports and sentences already seen in train.

Reports and sentences are compared after `splits.normalise_report_text`. The default split groups reports
by that normalised text, so no validation or test report repeats a train report; a predefined split may.
Sentences recur across different reports (boilerplate such as "No pneumothorax."), so the share of held-out
sentences seen in train stays high under any report-level split: it is reported, not hidden.
"""

from __future__ import annotations

from radmetrics.inference.text.sentences import split_sentences

from .splits import NORMALISATION, SPLITS, normalise_report_text


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _normalised_sentences(text: str, sentence_method: str) -> list[str]:
    return [s for s in (normalise_report_text(x) for x in split_sentences(text, sentence_method)) if s]


def _split_counts(reports: list[str], sentences: list[str]) -> dict:
    return {
        "reports": len(reports),
        "distinct_reports": len(set(reports)),
        "sentences": len(sentences),
        "distinct_sentences": len(set(sentences)),
    }


def _overlap_with_train(
    reports: list[str], sentences: list[str], train_reports: set[str], train_sentences: set[str]
) -> dict:
    in_train = sum(r in train_reports for r in reports)
    distinct = set(sentences)
    return {
        "reports_in_train": in_train,
        "reports_in_train_share": _share(in_train, len(reports)),
        "sentences_in_train_share": _share(sum(s in train_sentences for s in sentences), len(sentences)),
        "distinct_sentences_in_train_share": _share(len(distinct & train_sentences), len(distinct)),
    }


def split_overlap(texts_by_split: dict[str, list[str]], sentence_method: str = "robust") -> dict:
    """Per split: reports, distinct normalised reports, sentences; for held-out splits the share of reports
    whose normalised text occurs in train and the share of (distinct) normalised sentences that occur in train."""
    reports = {s: [normalise_report_text(t) for t in texts] for s, texts in texts_by_split.items()}
    sentences = {
        s: [x for t in texts for x in _normalised_sentences(t, sentence_method)] for s, texts in texts_by_split.items()
    }
    train_reports, train_sentences = set(reports.get("train", ())), set(sentences.get("train", ()))
    per_split = {}
    for split in sorted(texts_by_split, key=lambda s: (SPLITS.index(s) if s in SPLITS else len(SPLITS), s)):
        per_split[split] = _split_counts(reports[split], sentences[split])
        if split != "train":
            per_split[split].update(
                _overlap_with_train(reports[split], sentences[split], train_reports, train_sentences)
            )
    return {"normalisation": NORMALISATION, "sentence_splitter": sentence_method, "per_split": per_split}


def overlap_card_section(overlap: dict) -> str:
    """The dataset-card section that states the overlap table and what it means."""
    rows = []
    for split, s in overlap["per_split"].items():
        seen = (
            ("—", "—", "—")
            if split == "train"
            else (
                f"{s['reports_in_train']} ({_percent(s['reports_in_train_share'])})",
                _percent(s["sentences_in_train_share"]),
                _percent(s["distinct_sentences_in_train_share"]),
            )
        )
        rows.append(
            f"| {split} | {s['reports']} | {s['distinct_reports']} | {seen[0]} | {s['sentences']} | {seen[1]} |"
            f" {seen[2]} |"
        )
    return (
        "## Overlap between splits\n\n"
        f"Reports and sentences compared after normalisation ({overlap['normalisation']}).\n\n"
        "| split | reports | distinct reports | reports also in train | sentences | sentences also in train "
        "| distinct sentences also in train |\n|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "A held-out report that repeats a train report measures memorisation, not generalisation; the default split "
        "(`--split-by text`) keeps reports with the same normalised text in one split, so it repeats none. Sentences "
        'recur across different reports (boilerplate such as "No pneumothorax."), so many held-out sentences also '
        "occur in train under any report-level split.\n"
    )


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"
