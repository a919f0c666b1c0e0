"""Token ids of the released GREEN look-alike's greedy answers on the parity pairs, for
tests/data/released/green_answer_ids.json, so that the GREEN parity test can follow the reference's decoding token by
token (parity/decoding.py) instead of comparing whole answers, which a near tie between two logits lets a float
kernel flip.

radeval.json (tests/parity/make_fixtures.py) holds radeval 2.2.1's answers as text only. This script runs radmetrics'
`ReleasedGreen` on the same look-alike and pairs (batches of 8 in input order, greedy, `max_length` 2,048, as the
reference) with MKL's AVX2 kernels, the kernels radeval.json was made with, records every `generate` call's new token
ids (parity/reference/_common.py `record_generate`), and keeps a pair's ids only where its cleaned answer is the
reference's text exactly; a pair whose answer differs gets null and is reported. The test then checks that the
followed ids give the reference's text again, so the ids stand for the reference's answer, not only for this run's.

    python tests/parity/make_green_answer_ids.py [--batches K ...] [--out tests/data/released/green_answer_ids.json]

Each batch of 8 takes about 70 s of CPU (2,048 tokens a sequence, recomputed at every step as the reference does).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

os.environ["MKL_ENABLE_INSTRUCTIONS"] = "AVX2"  # radeval.json's kernels: set before torch loads MKL
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from parity import lookalikes  # noqa: E402
from parity.reports import fingerprint, parity_pairs  # noqa: E402

RADEVAL = HERE.parent / "data" / "released" / "radeval.json"
OUT = HERE.parent / "data" / "released" / "green_answer_ids.json"
GREEN = "StanfordAIMI/GREEN-RadLlama2-7b"
BATCH = 8  # radeval's GREEN batches: 8 pairs in input order


def own_answer_ids(root: Path, references: list[str], candidates: list[str]) -> tuple[list[list[int]], list[str]]:
    """Each pair's new token ids (padding after the end included) and cleaned answer, from radmetrics' own run."""
    from transformers.generation.utils import GenerationMixin

    from parity.reference._common import record_generate
    from radmetrics.inference.metrics.green.released import ReleasedGreen

    calls, original = [], GenerationMixin.generate
    record_generate(calls)
    try:
        texts, errors = ReleasedGreen(str(lookalikes.snapshot(root, GREEN))).responses(references, candidates)
    finally:
        GenerationMixin.generate = original
    if any(errors):
        raise RuntimeError(f"pairs without an answer: {[i for i, e in enumerate(errors) if e]}")
    return [answer for call in calls for answer in call["answers"]], texts


def fixture_text(made: dict, kept: list[list[int] | None], batches: list[int]) -> str:
    """green_answer_ids.json: provenance, radeval.json's digest and fingerprints, one line per pair's ids."""
    import torch
    import transformers

    fixture = {
        "made_by": "python tests/parity/make_green_answer_ids.py --batches " + " ".join(map(str, batches)),
        "how": (
            "radmetrics' ReleasedGreen on the radeval.json look-alike and pairs, MKL_ENABLE_INSTRUCTIONS=AVX2, the "
            "reference's batches of 8 named by --batches (batch k: pairs 8k to 8k+7); each pair's new token ids "
            "(padding after the end included), kept where its cleaned answer is radeval.json's green_analysis text "
            "exactly; null for a pair whose answer differs or whose batch was not run (its answer is compared as text)"
        ),
        "environment": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "machine": platform.machine(),
        },
        "lookalike_digest": made["lookalike_digest"],
        "inputs": {
            "references": made["inputs"]["references"],
            "candidates": made["inputs"]["candidates"],
            "green_analysis": fingerprint(made["outputs"]["green_analysis"]),
        },
    }
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in fixture.items())
    answers = ",\n".join(f"    {json.dumps(a)}" for a in kept)
    return "{\n" + lines + ',\n  "answer_ids": [\n' + answers + "\n  ]\n}\n"


def main() -> None:
    from radmetrics.inference.files.atomic import write_text

    made = json.loads(RADEVAL.read_text(encoding="utf-8"))
    expected = made["outputs"]["green_analysis"]
    every = list(range((len(expected) + BATCH - 1) // BATCH))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--batches", type=int, nargs="+", choices=every, default=every, metavar="K")
    args = parser.parse_args()
    references, candidates = parity_pairs()
    if (made["inputs"]["references"], made["inputs"]["candidates"]) != (
        fingerprint(references),
        fingerprint(candidates),
    ):
        raise SystemExit("radeval.json was made on other pairs: rerun tests/parity/make_fixtures.py first")
    kept: list[list[int] | None] = [None] * len(expected)
    with tempfile.TemporaryDirectory() as work:
        root = lookalikes.build(Path(work) / "lookalikes")
        if lookalikes.digest(root) != made["lookalike_digest"]:
            raise SystemExit("radeval.json was made from other look-alikes: rerun tests/parity/make_fixtures.py first")
        for batch in sorted(set(args.batches)):
            pairs = range(batch * BATCH, min(len(expected), (batch + 1) * BATCH))
            ids, texts = own_answer_ids(root, [references[i] for i in pairs], [candidates[i] for i in pairs])
            for i, answer, text in zip(pairs, ids, texts):
                kept[i] = answer if text == expected[i] else None
                print(f"pair {i}: {'kept' if kept[i] is not None else 'its answer differs'}", flush=True)
    write_text(args.out, fixture_text(made, kept, sorted(set(args.batches))))
    print(f"wrote {args.out}: {sum(a is not None for a in kept)} of {len(kept)} answers as token ids")


if __name__ == "__main__":
    main()
