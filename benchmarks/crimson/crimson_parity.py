"""CRIMSON parity with its authors' code (crimson-score 0.2.0), both parts, against the fixtures
tests/parity/make_crimson_fixture.py made in the reference's own environment; writes
benchmarks/results/crimson_parity.json with each part's pairs, settings and mismatches (none expected).

    python benchmarks/crimson/crimson_parity.py

1. the released model's look-alike (tests/parity/lookalikes.py `build_crimson`), twice: with Gemma 3's
   generation_config.json and without one; every parity pair without and with a patient context: the same prompt
   token ids, generation settings, answers and refusals;
2. an OpenAI-compatible endpoint serving 34 scripted answers (tests/parity/crimson_answers.py): the same scores or
   refusals and the same requests.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from common import machine, write_results  # noqa: E402
from parity.crimson_parity import compare_endpoint, compare_lookalike, fixture  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        lookalike = {
            variant: compare_lookalike(variant, None, Path(work)) for variant in fixture("lookalike")["variants"]
        }
        endpoint = compare_endpoint(Path(work))
    results = {
        "command": "python benchmarks/crimson/crimson_parity.py",
        "machine": machine(),
        "reference": "crimson-score==0.2.0 (its own environment: tests/parity/make_crimson_fixture.py)",
        "reference_environment": fixture("lookalike")["environment"],
        "lookalike": lookalike,
        "endpoint": endpoint,
        "holds": all(not part["mismatches"] for part in (*lookalike.values(), endpoint)),
    }
    print(write_results("crimson_parity.json", results), "holds:", results["holds"])


if __name__ == "__main__":
    main()
