"""ratescore==0.6.0 on the look-alike RaTE-NER-Deberta and BioLORD-2023-C (HF_HOME=ROOT/hf)."""

from _common import arguments, environment, load, save
from loguru import logger

logger.disable("PyRuSH")

from RaTEScore import RaTEScore  # noqa: E402
from RaTEScore.score import run_ner  # noqa: E402
from RaTEScore.utils import sentence_split  # noqa: E402


def main() -> None:
    args = arguments()
    inputs = load(args.inputs)
    refs, hyps = inputs["references"], inputs["candidates"]
    scorer = RaTEScore(use_gpu=False)

    def entities(reports):
        return [
            [list(e) for e in found]
            for found in run_ner(
                reports, scorer.idx2label, scorer.tokenizer, scorer.model, scorer.device, scorer.batch_size
            )
        ]

    def as_floats(scores):
        return [float(s) for s in scores]

    save(
        args.out,
        {
            "environment": environment("ratescore", "torch", "transformers", "medspacy", "PyRuSH"),
            "reference_sentences": [sentence_split([r])[0] for r in refs],
            "candidate_sentences": [sentence_split([h])[0] for h in hyps],
            "reference_entities": entities(refs),
            "candidate_entities": entities(hyps),
            "scores_long": as_floats(scorer.compute_score(hyps, refs)),
            "scores_short": as_floats(RaTEScore(use_gpu=False, affinity_matrix="short").compute_score(hyps, refs)),
            "empty_report_scores": as_floats(
                scorer.compute_score(inputs["empty_report_candidates"], inputs["empty_report_references"])
            ),
        },
    )


if __name__ == "__main__":
    main()
