"""Write tests/data/crimson/reference_endpoint.json: crimson-score 0.2.0 (PyPI; its own environment under --envs,
made once: the package without its dependencies, and openai) scores the parity pairs through its OpenAI path against
the scripted judge (parity/crimson_answers.py) served on 127.0.0.1; the fixture holds each pair's score or refusal
and every request the reference sent (settings, and messages by sha256).

    python tests/parity/make_crimson_fixture.py [--envs .venv-ref]
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

REQUIREMENTS = [["--no-deps", "crimson-score==0.2.0"], ["openai==3.57.0"]]


def environment(envs: Path) -> Path:
    python = envs / "crimson" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(envs / "crimson")], check=True)
        for requirements in REQUIREMENTS:
            subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    return python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=Path, default=REPO / ".venv-ref")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "crimson" / "reference_endpoint.json")
    args = parser.parse_args()
    references, candidates = pairs()
    python = environment(args.envs)
    with tempfile.TemporaryDirectory() as work, FaultServer(responder=judge()) as server:
        inputs, out = Path(work) / "inputs.json", Path(work) / "out.json"
        inputs.write_text(json.dumps({"references": references, "candidates": candidates}), encoding="utf-8")
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "none", "PYTHONPATH": ""}
        command = [str(python), str(HERE / "reference" / "run_crimson.py"), "--inputs", str(inputs), "--out", str(out)]
        subprocess.run(command, check=True, env=env, cwd=work)
        outputs = json.loads(out.read_text(encoding="utf-8"))
        requests = [request_record(body) for body in server.bodies]
    fixture = {
        "made_by": "python tests/parity/make_crimson_fixture.py",
        "reference": "crimson-score==0.2.0 (CRIMSONScore(api='openai', model_name='judge').evaluate per pair)",
        "environment": outputs["environment"],
        "inputs": {"references": fingerprint(references), "candidates": fingerprint(candidates)},
        "results": outputs["results"],
        "requests": requests,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(fixture['results'])} pairs, {len(requests)} requests", file=sys.stderr)


if __name__ == "__main__":
    main()
