"""Run crimson-score 0.2.0's OpenAI path on the parity pairs (in the reference's own environment, made by
tests/parity/make_crimson_fixture.py): one `CRIMSONScore(api="openai").evaluate` per pair against the scripted judge
at OPENAI_BASE_URL; each pair's score and weighted counts, or the type of the exception the reference raises."""

import argparse
import json
from importlib.metadata import version

from CRIMSON.generate_score import CRIMSONScore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    data = json.load(open(args.inputs, encoding="utf-8"))
    scorer = CRIMSONScore(api="openai", model_name="judge")
    results = []
    for reference, candidate in zip(data["references"], data["candidates"]):
        try:
            result = scorer.evaluate(reference, candidate)
        except Exception as exc:  # noqa: BLE001 - the reference's refusal is the result
            results.append({"refused": type(exc).__name__})
            continue
        results.append(
            {
                "crimson_score": result["crimson_score"],
                "error_counts": result["error_counts"],
                "weighted_error_counts": result["weighted_error_counts"],
            }
        )
    environment = {name: version(name) for name in ("crimson-score", "openai")}
    json.dump({"environment": environment, "results": results}, open(args.out, "w", encoding="utf-8"))


if __name__ == "__main__":
    main()
