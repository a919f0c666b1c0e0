"""f1chexbert==0.0.2 on the look-alike chexbert.pth (XDG_CACHE_HOME=ROOT/xdg, HF_HOME=ROOT/hf)."""

import pandas as pd
import torch
from _common import arguments, environment, load, save
from f1chexbert.f1chexbert import F1CheXbert, generate_attention_masks, tokenize


def main() -> None:
    args = arguments()
    inputs = load(args.inputs)
    refs, hyps = inputs["references"], inputs["candidates"]
    scorer = F1CheXbert(device="cpu")

    def head_classes(report: str) -> list[int]:
        """The 14 head classes `get_label` maps (same tokenisation, mask and model calls)."""
        batch = torch.LongTensor(tokenize(pd.Series([report.strip()]), scorer.tokenizer))
        mask = generate_attention_masks(batch, [batch.shape[1]], scorer.device)
        return [int(out.argmax(dim=1).item()) for out in scorer.model(batch, mask)]

    accuracy, pe_accuracy, report_14, report_5 = scorer(hyps=hyps, refs=refs)
    save(
        args.out,
        {
            "environment": environment("f1chexbert", "torch", "transformers", "scikit-learn"),
            "reference_classes": [head_classes(r) for r in refs],
            "candidate_classes": [head_classes(h) for h in hyps],
            "accuracy": float(accuracy),
            "pe_accuracy": [float(x) for x in pe_accuracy],
            "classification_report_14": report_14,
            "classification_report_5": report_5,
            "empty_candidate_classes": [head_classes(h) for h in inputs["empty_candidate_candidates"]],
        },
    )


if __name__ == "__main__":
    main()
