"""The authors' FineRadScore scripts (a checkout of rajpurkarlab/FineRadScore, --repo) run unchanged on our pairs,
with the OpenAI and Anthropic clients replaced by stand-ins that record each request instead of sending it."""

import json
import os
import sys
import tempfile
import types

import pandas as pd
from _common import environment, load, save

REQUESTS = {"gpt4": [], "claude3": []}


class _GPT4:
    @staticmethod
    def create(**kwargs):
        REQUESTS["gpt4"].append(kwargs)
        return {"choices": [{"message": {"content": "{}"}}], "usage": {"prompt_tokens": 0, "completion_tokens": 0}}


class _Claude:
    def __init__(self, **kwargs):
        self.messages = self

    def create(self, **kwargs):
        REQUESTS["claude3"].append(kwargs)
        return types.SimpleNamespace(
            content=[types.SimpleNamespace(text="{}")], usage=types.SimpleNamespace(input_tokens=0, output_tokens=0)
        )


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True, help="a checkout of rajpurkarlab/FineRadScore")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    inputs = load(args.inputs)
    sys.modules["openai"] = types.SimpleNamespace(
        ChatCompletion=_GPT4, api_type=None, api_base=None, api_version=None, api_key=None
    )
    sys.modules["anthropic"] = types.SimpleNamespace(Anthropic=_Claude)
    sys.path.insert(0, os.path.abspath(args.repo))
    inputs_out = os.path.abspath(args.out)
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        os.makedirs("datasets")
        os.makedirs("opus_results/rexval_test")
        pd.DataFrame(
            {
                "study_id": range(len(inputs["candidates"])),
                "pred_report": inputs["candidates"],
                "gt_report": inputs["references"],
            }
        ).to_csv("datasets/ReXVal_test_40.csv")
        from run_rexval_experiments import run_rexval_experiment

        run_rexval_experiment("gpt4", "fewshot")
        run_rexval_experiment("claude3", "fewshot")
    gpt4, claude = REQUESTS["gpt4"], REQUESTS["claude3"]
    save(
        inputs_out,
        {
            "environment": (
                environment("pandas") | {"fineradscore": "rajpurkarlab/FineRadScore (checkout given with --repo)"}
            ),
            "queries": [request["messages"][-1]["content"] for request in gpt4],
            "gpt4_messages_first_pair": gpt4[0]["messages"],
            "claude3_messages_first_pair": claude[0]["messages"],
            "claude3_settings": {k: v for k, v in claude[0].items() if k != "messages"},
            "gpt4_settings": {k: v for k, v in gpt4[0].items() if k != "messages"},
        },
    )
    print(json.dumps({"requests": len(gpt4)}), file=sys.stderr)


if __name__ == "__main__":
    main()
