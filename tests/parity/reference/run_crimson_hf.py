"""Run crimson-score 0.2.0's hf path on the parity pairs (in the reference's own environment, made by
tests/parity/make_crimson_fixture.py): `CRIMSONScore(api="hf")` loads its default model, which HF_HOME resolves to the
look-alike (tests/parity/lookalikes.py `build_crimson`), and `evaluate` scores each pair, with its patient context when
the inputs give one. Every generate call is recorded (prompt token ids, settings, the answer's token ids), with each
pair's answer and score or the type of the exception the reference raises. The reference sets no seed; the runner seeds
each call (0), as radmetrics does when the model's settings sample, so that sampled answers compare."""

import hashlib

import torch
from _common import arguments, environment, load, record_generate, save
from CRIMSON.generate_score import CRIMSONScore


def main() -> None:
    args = arguments()
    data = load(args.inputs)
    scorer = CRIMSONScore(api="hf")
    calls: list = []
    record_generate(calls)
    answers = []
    original = scorer._chat_completion

    def chat_completion(prompt):
        answer = original(prompt)
        answers.append(answer)
        return answer

    scorer._chat_completion = chat_completion
    results = []
    for reference, candidate, context in zip(data["references"], data["candidates"], data["contexts"]):
        torch.manual_seed(0)
        try:
            result = scorer.evaluate(reference, candidate, patient_context=context)
            outcome = {"crimson_score": result["crimson_score"], "error_counts": result["error_counts"]}
        except Exception as exc:  # noqa: BLE001 - the reference's refusal is the result
            outcome = {"refused": type(exc).__name__}
        call = calls[-1]
        results.append(
            {
                "prompt_ids_sha256": call["prompts"][0],
                "prompt_tokens": call["tokens"][0],
                "settings": call["settings"],
                "answer_sha256": hashlib.sha256(answers[-1].encode()).hexdigest(),
                "answer_ids": call["answers"][0],
                **outcome,
            }
        )
    save(args.out, {"environment": environment("crimson-score", "transformers", "torch"), "results": results})


if __name__ == "__main__":
    main()
