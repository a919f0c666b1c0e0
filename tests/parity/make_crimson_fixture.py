"""The CRIMSON parity fixtures, made by crimson-score 0.2.0 (PyPI) in its own environment under --envs (made once: the
package without its dependencies, openai, and for its hf path torch, transformers and accelerate):

- `--part endpoint` writes tests/data/crimson/reference_endpoint.json: the reference scores the parity pairs through
  its OpenAI path against the scripted judge (parity/crimson_answers.py) served on 127.0.0.1; the fixture holds each
  pair's score or refusal and every request the reference sent (settings, and messages by sha256);
- `--part lookalike` writes tests/data/crimson/reference_lookalike.json: the reference's hf path loads its default
  model, which HF_HOME resolves to a look-alike of it (parity/lookalikes.py `build_crimson`), and scores the parity
  pairs without and with a patient context; the fixture holds every generate call's prompt token ids and settings,
  each answer (sha256) and its score or refusal. Two look-alikes: one with Gemma 3's generation_config.json (the
  settings sample), one without (the reference's greedy fallback, up to 8,192 new tokens; its output layer ends every
  answer at once).

    python tests/parity/make_crimson_fixture.py --part endpoint|lookalike [--envs .venv-ref]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE.parent)]

from llm_fault_server import FaultServer  # noqa: E402

from parity.crimson_judge import judge, pairs, request_record  # noqa: E402
from parity.reports import fingerprint  # noqa: E402

REQUIREMENTS = [
    ["--no-deps", "crimson-score==0.2.0"],
    ["openai==3.57.0"],
    ["torch==2.13.0"],
    ["transformers==5.24.0", "accelerate==1.15.0"],
]
# Gemma 3's generation_config.json (google/gemma-3-4b-it; MedGemma-4B-it's has the same settings), its end-of-turn id
# mapped to the look-alike tokenizer's.
GEMMA3_GENERATION = {"bos_token_id": 2, "cache_implementation": "hybrid", "do_sample": True, "pad_token_id": 0}
GEMMA3_GENERATION.update({"top_k": 64, "top_p": 0.95, "transformers_version": "4.50.0.dev0"})
LOOKALIKES = {
    "gemma3_generation_config": {"generation_config": {**GEMMA3_GENERATION, "eos_token_id": [1, 5]}},
    "no_generation_config": {"generation_config": None, "stop_at_once": True},
}
CONTEXTS = [{"Age": "63", "Indication": "Shortness of breath."}, {"PatientAge": "8 years", "Indication": "fever"}]


def environment(envs: Path) -> Path:
    python = envs / "crimson" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(envs / "crimson")], check=True)
    for requirements in REQUIREMENTS:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    return python


def lookalike_inputs() -> dict:
    """Every parity pair without a context, then every pair with one of CONTEXTS (alternating)."""
    references, candidates = pairs()
    contexts = [None] * len(references) + [CONTEXTS[i % 2] for i in range(len(references))]
    return {"references": references * 2, "candidates": candidates * 2, "contexts": contexts}


def build_lookalike(root: Path, variant: str) -> str:
    from parity.lookalikes import build_crimson, digest

    build_crimson(root, **LOOKALIKES[variant])
    return digest(root)


def lookalike_fixture(python: Path) -> dict:
    data, variants, digests = lookalike_inputs(), {}, {}
    for variant in LOOKALIKES:
        with tempfile.TemporaryDirectory() as work:
            root, inputs, out = Path(work) / "lookalike", Path(work) / "inputs.json", Path(work) / "out.json"
            digests[variant] = build_lookalike(root, variant)
            inputs.write_text(json.dumps(data), encoding="utf-8")
            env = {**os.environ, "HF_HOME": str(root / "hf"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
            script = HERE / "reference" / "run_crimson_hf.py"
            command = [str(python), str(script), "--root", str(root), "--inputs", str(inputs), "--out", str(out)]
            subprocess.run(command, check=True, env=env, cwd=work)
            outputs = json.loads(out.read_text(encoding="utf-8"))
        variants[variant] = outputs["results"]
    return {
        "made_by": "python tests/parity/make_crimson_fixture.py --part lookalike",
        "reference": "crimson-score==0.2.0 (CRIMSONScore(api='hf').evaluate per pair, its default model)",
        "environment": outputs["environment"],
        "lookalike_digest": digests,
        "inputs": {
            "references": fingerprint(data["references"]),
            "candidates": fingerprint(data["candidates"]),
            "contexts": fingerprint([json.dumps(c) for c in data["contexts"]]),
        },
        "variants": variants,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("endpoint", "lookalike"), required=True)
    parser.add_argument("--envs", type=Path, default=REPO / ".venv-ref")
    args = parser.parse_args()
    python = environment(args.envs)
    out = REPO / "tests" / "data" / "crimson" / f"reference_{args.part}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    fixture = lookalike_fixture(python) if args.part == "lookalike" else endpoint_fixture(python)
    out.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


def endpoint_fixture(python: Path) -> dict:
    references, candidates = pairs()
    with tempfile.TemporaryDirectory() as work, FaultServer(responder=judge()) as server:
        inputs, out = Path(work) / "inputs.json", Path(work) / "out.json"
        inputs.write_text(json.dumps({"references": references, "candidates": candidates}), encoding="utf-8")
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "none", "PYTHONPATH": ""}
        command = [str(python), str(HERE / "reference" / "run_crimson.py"), "--inputs", str(inputs), "--out", str(out)]
        subprocess.run(command, check=True, env=env, cwd=work)
        outputs = json.loads(out.read_text(encoding="utf-8"))
        requests = [request_record(body) for body in server.bodies]
    return {
        "made_by": "python tests/parity/make_crimson_fixture.py --part endpoint",
        "reference": "crimson-score==0.2.0 (CRIMSONScore(api='openai', model_name='judge').evaluate per pair)",
        "environment": outputs["environment"],
        "inputs": {"references": fingerprint(references), "candidates": fingerprint(candidates)},
        "results": outputs["results"],
        "requests": requests,
    }


if __name__ == "__main__":
    main()
