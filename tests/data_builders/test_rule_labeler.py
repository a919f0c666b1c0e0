import json

from radmetrics.data_builders.agreement.labeler import f1_against_negbio
from radmetrics.data_builders.silver.rule_labeler import label_report


def test_reproduces_chexpert_labeler_oracle(test_data):
    cases = json.loads((test_data / "oracles" / "chexpert_labeler_expected.json").read_text())["chexpert_labeler"][
        "cases"
    ]
    for case in cases:
        expected = {k: None if v is None else int(v) for k, v in case["labels"].items()}
        assert label_report(case["report"]) == expected, case["report"]


def test_negation_uncertainty_and_scope():
    labels = label_report("No pneumothorax. Possible left lower lobe pneumonia. Small pleural effusion but no edema.")
    assert labels["Pneumothorax"] == 0 and labels["Pneumonia"] == -1
    assert labels["Pleural Effusion"] == 1 and labels["Edema"] == 0 and labels["No Finding"] is None
    assert label_report("Pericardial effusion.")["Pleural Effusion"] is None  # unmention phrase


def test_agreement_with_negbio_gold_is_measured():
    result = f1_against_negbio()
    assert result["reports"] > 3800
    assert result["per_label"]["Pleural Effusion"]["f1"] > 0.85 and result["macro_f1"] > 0.7
