"""NegBio's manual IU X-ray labels as the expert labels of the labeler's second stage, split by report into gold
train / validation / test.

Smit et al. 2020 (CheXbert) train first on the CheXpert labeler's output, then fine-tune on radiologists' labels;
here the expert labels are NegBio's manual labels of the IU X-ray reports (data_builders/agreement/labeler.py reads
them) on the findings both label sets share.

The split hashes each report's normalised text (data_builders/corpus/splits.py), so reports with the same text share a
split. Its seed differs from the silver split's (seed 0), so the two are independent: the silver validation and test
splits of stage 1 keep reports outside the gold reserve. The reserve is the gold validation and test reports: stage 1
(chexbert/finetune) drops every training report whose normalised text is in it, so neither stage learns from a report
that validation or test scores, and validation stays a fair stand-in for test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from radmetrics.data_builders.corpus.splits import SPLITS, hash_split, normalise_report_text

GOLD_SOURCE = "NegBio manual labels of the IU X-ray reports (ncbi-nlp/NegBio openi gold standard)"


@dataclass
class GoldSplitArguments:
    gold_split_ratios: list[float] = field(
        default_factory=lambda: [0.6, 0.15, 0.25],
        metadata={
            "help": (
                "gold train / validation / test fractions of the NegBio-labelled IU X-ray reports (by normalised text)"
            )
        },
    )
    gold_split_seed: int = field(
        default=1,
        metadata={
            "help": "seed of the gold split's hash (the silver split uses 0); stage 1 and stage 2 must use the same"
        },
    )

    def describe(self) -> dict:
        return {"ratios": [float(r) for r in self.gold_split_ratios], "seed": int(self.gold_split_seed)}

    def split_of(self, text: str) -> str:
        return hash_split(normalise_report_text(text), tuple(self.gold_split_ratios), self.gold_split_seed)


@dataclass(frozen=True)
class GoldReport:
    id: str
    text: str
    positive: dict[str, bool]  # CheXpert observation name -> NegBio marks the finding present


def gold_reports(split_args: GoldSplitArguments) -> dict[str, list[GoldReport]]:
    """Every IU X-ray report NegBio labelled (and with text), by gold split, over the labels both sets share."""
    from radmetrics.data_builders.agreement.labeler import SHARED_LABELS, read_negbio_gold
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    gold = read_negbio_gold()
    by_split: dict[str, list[GoldReport]] = {split: [] for split in SPLITS}
    for report in iu_xray_corpus():
        if report.id in gold and report.text:
            positive = {ours: gold[report.id][negbio] == 1 for negbio, ours in SHARED_LABELS.items()}
            by_split[split_args.split_of(report.text)].append(GoldReport(report.id, report.text, positive))
    return by_split


def reserved_texts(split_args: GoldSplitArguments) -> set[str]:
    """Normalised texts of the gold validation and test reports, which no training stage may learn from."""
    by_split = gold_reports(split_args)
    return {normalise_report_text(r.text) for split in ("validation", "test") for r in by_split[split]}


def drop_reserved(dataset, reserved: set[str]):
    """`dataset` (a `text` column) without the reports whose normalised text is reserved; returns it and how many
    went."""
    keep = [i for i, text in enumerate(dataset["text"]) if normalise_report_text(text) not in reserved]
    return dataset.select(keep), len(dataset) - len(keep)
