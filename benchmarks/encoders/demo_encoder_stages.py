"""The demo's data stages and its three tiny encoder recipes (RaTE-NER span, CheXbert-style labeler, RadGraph-style
extractor), with each stage's line and a digest of each trained model's weights: two source trees that train the same
models give the same digests.

    python benchmarks/encoders/demo_encoder_stages.py --out /tmp/stages_head
    # another commit's sources (a worktree linked in as the package radmetrics), with this tree's deterministic
    # WordPiece trainer put in for its own
    git worktree add /tmp/base OLD_COMMIT && mkdir -p /tmp/pkgs/radmetrics
    ln -s /tmp/base/{training,data_builders,inference} /tmp/pkgs/radmetrics/
    PYTHONPATH=/tmp/pkgs python benchmarks/encoders/demo_encoder_stages.py --out /tmp/base_stages \\
        --wordpiece-from training/tiny.py

Why the WordPiece option: before `training/tiny.wordpiece_vocabulary`, the tiny tokenizers came from `tokenizers`'
Rust trainer, whose vocabulary changed from process to process, so an older commit's tiny models cannot be
reproduced without this tree's trainer.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import machine  # noqa: E402

STAGES = ("stage_corpus", "stage_silver", "stage_rate_ner_span", "stage_chexbert", "stage_radgraph")


def weights_digest(export: Path) -> str:
    from safetensors.torch import load_file

    weights = load_file(str(export / "model.safetensors"))
    digest = hashlib.sha256()
    for name in sorted(weights):
        digest.update(name.encode())
        digest.update(weights[name].float().numpy().tobytes())
    return digest.hexdigest()[:16]


def use_wordpiece_trainer(source: Path) -> None:
    """Replace radmetrics.training.tiny's WordPiece trainer by the one in `source` (another tree's tiny.py)."""
    from radmetrics.training import tiny

    spec = importlib.util.spec_from_file_location("wordpiece_source", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tiny.train_wordpiece_tokenizer = module.train_wordpiece_tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="an empty or new folder")
    parser.add_argument("--wordpiece-from", type=Path, help="a tiny.py whose train_wordpiece_tokenizer to use")
    parser.add_argument("--results", type=Path, help="also write the lines and digests to this JSON file")
    args = parser.parse_args()
    if args.wordpiece_from:
        use_wordpiece_trainer(args.wordpiece_from.resolve())
    from radmetrics.training import demo

    args.out.mkdir(parents=True, exist_ok=False)
    state: dict = {"endpoint": None}
    lines = {}
    for name in STAGES:
        start = time.perf_counter()
        lines[name] = getattr(demo, name)(args.out, state)
        print(f"{name} | {lines[name]} | {time.perf_counter() - start:.0f} s", flush=True)
    digests = {component: weights_digest(Path(path)) for component, path in sorted(state["components"].items())}
    print(json.dumps(digests, indent=2))
    if args.results:
        result = {
            "sources": demo.__file__,
            "wordpiece_from": str(args.wordpiece_from) if args.wordpiece_from else None,
            "lines": lines,
            "weights_sha256_16": digests,
            "command": " ".join(["python", *sys.argv]),
            "machine": machine(),
        }
        args.results.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
