"""Token ids for the CRIMSON look-alike fixture's answers that it holds by sha256 only, so that the parity test can
follow each of them token by token (parity/decoding.py) instead of comparing it whole.

tests/data/crimson/reference_lookalike.json (make_crimson_fixture.py --part lookalike, crimson-score 0.2.0 in its own
environment, over an hour) holds every answer's sha256; token ids only where they were added since. This script runs
radmetrics' crimson on the same look-alike and inputs (parity/crimson_parity.py `lookalike_calls`: no following, the
run's own decoding), and for each pair without ids whose answer's sha256 is the reference's `answer_sha256`, stores
the run's new token ids as `answer_ids`. The test then checks that the followed ids give an answer with that sha256
again, so the ids stand for the reference's answer. A pair whose answer differs keeps its sha256 only, and is listed.

    python tests/parity/add_crimson_answer_ids.py [--variant gemma3_generation_config]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from parity.crimson_parity import FIXTURES, fixture, lookalike_calls  # noqa: E402
from parity.make_crimson_fixture import build_lookalike  # noqa: E402

MADE_BY = (
    "radmetrics' own run of each look-alike (tests/parity/add_crimson_answer_ids.py: parity/crimson_parity.py "
    "lookalike_calls, {environment}), kept for a pair only where its answer's sha256 is the reference's "
    "answer_sha256; python tests/parity/make_crimson_fixture.py --part lookalike records the reference's own for "
    "every pair"
)


def add_answer_ids(variant: str) -> tuple[dict, list[int], list[int]]:
    """The fixture with `answer_ids` added to `variant`'s pairs that lack them; the pairs added and those whose answer
    differs."""
    import torch
    import transformers

    made = fixture("lookalike")
    expected = made["variants"][variant]
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "lookalike"
        if build_lookalike(root, variant) != made["lookalike_digest"][variant]:
            raise SystemExit(f"the {variant} look-alike differs from the fixture's: rerun make_crimson_fixture.py")
        calls, result = lookalike_calls(root, None)
    added, differ = [], []
    for i, (call, detail, theirs) in enumerate(zip(calls, result.details["crimson"], expected)):
        if "answer_ids" in theirs:
            continue
        if hashlib.sha256(detail["response"].encode()).hexdigest() == theirs["answer_sha256"]:
            theirs["answer_ids"] = call["answers"][0]
            added.append(i)
        else:
            differ.append(i)
    machine = f"torch {torch.__version__}, transformers {transformers.__version__}, {platform.machine()}"
    made["answer_ids_made_by"] = MADE_BY.format(environment=machine)
    return made, added, differ


def main() -> None:
    from radmetrics.inference.files.atomic import write_text

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="gemma3_generation_config")
    args = parser.parse_args()
    made, added, differ = add_answer_ids(args.variant)
    out = FIXTURES / "reference_lookalike.json"
    write_text(out, json.dumps(made, indent=1) + "\n")
    print(f"wrote {out}: answer_ids added for pairs {added}; answers that differ (sha256 only): {differ}")


if __name__ == "__main__":
    main()
