"""seqeval's entity scores as a local `evaluate` module (written for radmetrics' tests, loaded offline with
`evaluate.load(path)`): the independent check of radmetrics.training.span.scores in
tests/training/test_span_scores.py."""

import datasets
import evaluate
from seqeval.metrics import classification_report


class EvaluateSeqeval(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="seqeval's micro and per-type entity precision, recall and F1 (default, lenient mode)",
            citation=(
                "@misc{seqeval, title={seqeval: A Python framework for sequence labeling evaluation}, "
                "author={Hiroki Nakayama}, year={2018}, url={https://github.com/chakki-works/seqeval}}"
            ),
            inputs_description="predictions and references: lists of IOB tag sequences",
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Value("string")),
                }
            ),
        )

    def _compute(self, predictions, references):
        report = classification_report(references, predictions, output_dict=True, zero_division=0)
        return {
            name: {
                "precision": float(row["precision"]),
                "recall": float(row["recall"]),
                "f1": float(row["f1-score"]),
                "support": int(row["support"]),
            }
            for name, row in report.items()
        }
