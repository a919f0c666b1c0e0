"""Agreement of the CheXpert-style rule labeler with NegBio's manual 14-label gold on the IU X-ray reports.

Only labels both sets share are compared: Atelectasis, Cardiomegaly, Effusion/Pleural Effusion, Pneumonia,
Pneumothorax, Consolidation, Edema, and normal/No Finding. A rule label of 1 counts as positive;
`uncertain_as_positive` also counts -1 as positive.
"""

from __future__ import annotations

import csv

from radmetrics.inference.scoring.stats import precision_recall_f1

from ..corpus.corpora import bundled_path, iu_xray_corpus
from ..silver.rule_labeler import label_report

SHARED_LABELS = {
    "Atelectasis": "Atelectasis",
    "Cardiomegaly": "Cardiomegaly",
    "Effusion": "Pleural Effusion",
    "Pneumonia": "Pneumonia",
    "Pneumothorax": "Pneumothorax",
    "Consolidation": "Consolidation",
    "Edema": "Edema",
    "normal": "No Finding",
}


def read_negbio_gold(path=None) -> dict[str, dict[str, int]]:
    path = path or bundled_path("iu_xray", "negbio_openi_gold_standard_14labels.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        return {
            row["filename"].removeprefix("CXR"): {k: int(v) for k, v in row.items() if k != "filename"}
            for row in csv.DictReader(fh)
        }


def f1_against_negbio(
    report_ids: set[str] | None = None, uncertain_as_positive: bool = False, predictions: dict[str, dict] | None = None
) -> dict:
    """Per shared label P/R/F1 against NegBio gold. `predictions` ({report id: {observation: 1/0/-1/None}})
    scores another labeler (a trained CheXbert-style model) on its reports; default: the rule labeler."""
    gold = read_negbio_gold()
    if predictions is not None:
        report_ids = set(predictions) if report_ids is None else report_ids & set(predictions)
    reports = [r for r in iu_xray_corpus() if r.id in gold and (report_ids is None or r.id in report_ids)]
    positive = {1, -1} if uncertain_as_positive else {1}
    results = {}
    if predictions is None:
        predictions = {r.id: label_report(r.text) for r in reports}
    for negbio_name, ours in SHARED_LABELS.items():
        tp = fp = fn = 0
        for r in reports:
            pred = predictions[r.id][ours] in positive
            true = gold[r.id][negbio_name] == 1
            tp += pred and true
            fp += pred and not true
            fn += true and not pred
        precision, recall, f1 = precision_recall_f1(tp, tp + fp, tp + fn)
        results[ours] = {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn}
    return {
        "reports": len(reports),
        "uncertain_as_positive": uncertain_as_positive,
        "per_label": results,
        "macro_f1": sum(v["f1"] for v in results.values()) / len(results),
    }
