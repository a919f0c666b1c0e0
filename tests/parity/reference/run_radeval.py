"""radeval==2.2.1's GREEN (on the look-alike GREEN-RadLlama2-7b) and CheXbert semantic-embedding score (on the
look-alike chexbert.pth), HF_HOME=ROOT/hf and XDG_CACHE_HOME=ROOT/xdg."""

import os
import shutil

from _common import arguments, environment, load, save


def main() -> None:
    args = arguments()
    inputs = load(args.inputs)
    refs, hyps = inputs["references"], inputs["candidates"]
    # radeval's CheXbert fetches chexbert.pth through hf_hub_download into its own cache: give it the look-alike there
    hub = os.path.join(args.root, "hf", "hub", "models--StanfordAIMI--RRG_scorers")
    shutil.copytree(
        hub,
        os.path.join(os.environ["XDG_CACHE_HOME"], "chexbert", "models--StanfordAIMI--RRG_scorers"),
        dirs_exist_ok=True,
    )

    from radeval.metrics.green_score import GREEN
    from radeval.metrics.RadCliQv1.semb_score import semantic_embedding_scores

    green = GREEN("StanfordAIMI/GREEN-radllama2-7b", output_dir=args.root, cpu=True)
    prompt_ids, generate = [], green.model.generate

    def spy(**kwargs):  # record each pair's prompt ids as fed to the model (left padding removed)
        for ids, mask in zip(kwargs["input_ids"].tolist(), kwargs["attention_mask"].tolist()):
            prompt_ids.append([i for i, m in zip(ids, mask) if m])
        return generate(**kwargs)

    green.model.generate = spy
    mean, std, scores, results = green(refs, hyps)
    main_prompts = list(prompt_ids)
    prompt_ids.clear()
    _, _, empty_scores, _ = green(inputs["empty_candidate_references"], inputs["empty_candidate_candidates"])
    parser = GREEN(cpu=True)
    responses = inputs["green_responses"]
    save(
        args.out,
        {
            "environment": environment("radeval", "torch", "transformers", "tokenizers"),
            "green_prompt_ids": main_prompts,
            "empty_candidate_green_prompt_ids": list(prompt_ids),
            "empty_candidate_green_scores": [None if s is None else float(s) for s in empty_scores],
            "green_analysis": list(results["green_analysis"]),
            "green_scores": [float(s) for s in scores],
            "green_mean": float(mean),
            "parsed_responses": [
                {
                    "green": parser.compute_green(r),
                    "significant": parser.parse_error_counts(r, parser.categories[0])[1],
                    "insignificant": parser.parse_error_counts(r, parser.categories[1])[1],
                    "matched": parser.parse_error_counts(r, parser.categories[2])[0],
                }
                for r in responses
            ],
            "chexbert_similarity": [float(s) for s in semantic_embedding_scores(refs, hyps, device="cpu")],
            "empty_candidate_chexbert_similarity": [
                float(s)
                for s in semantic_embedding_scores(
                    inputs["empty_candidate_references"], inputs["empty_candidate_candidates"], device="cpu"
                )
            ],
        },
    )


if __name__ == "__main__":
    main()
