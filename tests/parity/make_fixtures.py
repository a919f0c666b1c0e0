"""Write the released-weights parity fixtures (tests/data/released/*.json) by running the reference packages,
each in its own environment, on random-weight look-alikes of the released artefacts.

    bash .ci/env python tests/parity/make_fixtures.py [--only chexbert radgraph ratescore radeval fineradscore]
                                                       [--envs DIR] [--fineradscore-repo PATH]

1. builds the look-alikes (tests/parity/lookalikes.py) in a temporary folder, with this environment's torch;
2. creates, once, a virtual environment per reference under --envs (default .venv-ref/ in the repository):
   torch 2.13.0 first, then the package and its pins (below);
3. runs tests/parity/reference/run_<name>.py in it, offline (HF_HOME and XDG_CACHE_HOME inside the look-alikes);
4. writes each fixture with the package versions, the look-alike digest and a fingerprint of the inputs.
FineRadScore has no package: pass a checkout of rajpurkarlab/FineRadScore with --fineradscore-repo (it runs in
the radeval environment). Needs the package registry the first time; about 10 minutes on 2 CPU cores.
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
sys.path.insert(0, str(HERE.parent))

from parity import lookalikes  # noqa: E402
from parity.green_responses import responses  # noqa: E402
from parity.reports import empty_candidate_pairs, fingerprint, iu_reports, parity_pairs  # noqa: E402

# environment -> (pip requirement sets, installed in order; "--no-deps" applies to its own set)
ENVIRONMENTS = {
    "chexbert": [["f1chexbert==0.0.2", "transformers==4.49.0", "scikit-learn==1.7.2"]],
    "radgraph": [["radgraph==0.1.18", "transformers==4.49.0"]],
    # RadCliQ's BERTScore as CXR-Report-Metric ran it: bert-score on transformers 4, whose encode honours
    # add_prefix_space (benchmarks/speed/scoring_speed_vs_reference.py times it)
    "bertscore": [["bert-score==0.3.13", "transformers==4.49.0"]],
    "ratescore": ["ratescore==0.6.0 transformers==4.49.0 medspacy==1.3.1 numpy<2 pandas<3 loguru".split()],
    "radeval": [
        ["--no-deps", "radeval==2.2.1"],
        (
            "transformers==5.23.0 datasets>=2.19 accelerate>=1.1 pandas nltk sentencepiece matplotlib "
            "huggingface_hub>=1.0 tqdm protobuf appdirs scikit-learn>=1.8"
        ).split(),
        # what its RadGraph and RaTEScore import (benchmarks/speed/scoring_speed_vs_reference.py runs them); medspacy
        # needs numpy<2, and with it GREEN's datasets needs a pyarrow and datasets built for numpy 1 (the radeval
        # fixture reproduces in this environment)
        ("dotmap jsonpickle h5py rich medspacy==1.3.1 numpy<2 pandas<3 pyarrow<18 datasets>=2.19,<4").split(),
    ],
}
REFERENCES = {
    "chexbert": "f1chexbert==0.0.2",
    "radgraph": "radgraph==0.1.18",
    "ratescore": "ratescore==0.6.0",
    "radeval": "radeval==2.2.1",
    "fineradscore": "rajpurkarlab/FineRadScore @ c678cc2",
}


def environment(envs: Path, name: str) -> Path:
    python = envs / name / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(envs / name)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0"], check=True)
        for requirements in ENVIRONMENTS[name]:
            subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    return python


def inputs() -> dict:
    references, candidates = parity_pairs()
    empty_references, empty_candidates = empty_candidate_pairs()
    extra = iu_reports(4)
    return {
        "references": references,
        "candidates": candidates,
        "empty_candidate_references": empty_references,
        "empty_candidate_candidates": empty_candidates,
        # RaTEScore drops a report without a usable sentence and pairs the rest out of step
        "empty_report_references": [extra[0], "", extra[2], "ok", extra[3]],
        "empty_report_candidates": [extra[1], extra[2], "  ", extra[0], extra[3]],
        "green_responses": responses(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--only", nargs="+", choices=REFERENCES, default=["chexbert", "radgraph", "ratescore", "radeval"]
    )
    parser.add_argument("--envs", type=Path, default=REPO / ".venv-ref")
    parser.add_argument("--fineradscore-repo", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "released")
    args = parser.parse_args()
    if "fineradscore" in args.only and not args.fineradscore_repo:
        parser.error("--only fineradscore needs --fineradscore-repo (a checkout of rajpurkarlab/FineRadScore)")
    args.envs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        root = lookalikes.build(Path(work) / "lookalikes")
        digest = lookalikes.digest(root)
        data = inputs()
        (Path(work) / "inputs.json").write_text(json.dumps(data), encoding="utf-8")
        env = {
            **os.environ,
            "HF_HOME": str(root / "hf"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "XDG_CACHE_HOME": str(root / "xdg"),
            "PYTHONPATH": str(HERE / "reference"),
            "TOKENIZERS_PARALLELISM": "false",
            "MKL_ENABLE_INSTRUCTIONS": "AVX2",  # as radeval.json was made; make_green_answer_ids.py runs alike
        }
        for name in args.only:
            out = Path(work) / f"{name}.json"
            if name == "fineradscore":
                command = [
                    str(environment(args.envs, "radeval")),
                    str(HERE / "reference" / "run_fineradscore.py"),
                    "--repo",
                    str(args.fineradscore_repo),
                    "--inputs",
                    str(Path(work) / "inputs.json"),
                    "--out",
                    str(out),
                ]
            else:
                command = [
                    str(environment(args.envs, name)),
                    str(HERE / "reference" / f"run_{name}.py"),
                    "--root",
                    str(root),
                    "--inputs",
                    str(Path(work) / "inputs.json"),
                    "--out",
                    str(out),
                ]
            print(f"[{name}] {' '.join(command)}", file=sys.stderr)
            subprocess.run(command, check=True, env=env, cwd=work)
            outputs = json.loads(out.read_text(encoding="utf-8"))
            fixture = {
                "made_by": (
                    "python tests/parity/make_fixtures.py"
                    + (" --fineradscore-repo PATH" if name == "fineradscore" else "")
                ),
                "reference": REFERENCES[name],
                "environment": outputs.pop("environment"),
                "lookalike_digest": digest,
                "inputs": {key: fingerprint(value) for key, value in data.items()},
                "outputs": outputs,
            }
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{name}.json").write_text(json.dumps(fixture, separators=(",", ":")) + "\n", encoding="utf-8")
            print(f"[{name}] wrote {args.out / f'{name}.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
