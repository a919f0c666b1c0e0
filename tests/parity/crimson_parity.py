"""radmetrics' crimson against crimson-score 0.2.0's fixtures (tests/parity/make_crimson_fixture.py), in both parts of
the parity check; the tests and benchmarks/crimson/crimson_parity.py run these and read the mismatches they list.

- `compare_endpoint`: the scripted judge (parity/crimson_answers.py) on 127.0.0.1 answers radmetrics' requests as it
  answered the reference's: each pair's score, weighted and plain counts, or refusal, and each request's messages and
  settings, against the reference's;
- `compare_lookalike`: the look-alike of the released model (parity/lookalikes.py `build_crimson`) scored through
  `--components crimson=PATH`: each generate call's prompt token ids and settings exactly; its decoding followed
  token by token against the reference's (parity/decoding.py: each step's draw or argmax recomputed from the run's
  own logits, a near tie that float kernels can flip tolerated and counted, any other difference a mismatch) for
  each pair whose fixture entry holds the answer's token ids (`answer_ids`); then each answer (by sha256), its token
  ids and each score or refusal exactly.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "crimson"


def fixture(part: str) -> dict:
    return json.loads((FIXTURES / f"reference_{part}.json").read_text(encoding="utf-8"))


def compare_endpoint(work: Path) -> dict:
    from llm_fault_server import FaultServer

    from parity.crimson_judge import judge, pairs, request_record
    from parity.reports import fingerprint
    from radmetrics.inference.scoring.scorer import Scorer

    made = fixture("endpoint")
    references, candidates = pairs()
    if made["inputs"] != {"references": fingerprint(references), "candidates": fingerprint(candidates)}:
        raise RuntimeError("the endpoint fixture was made on other pairs: rerun make_crimson_fixture.py")
    endpoint = Path(work) / "judge.yaml"
    with FaultServer(responder=judge()) as server:
        endpoint.write_text(f"model: judge\nbase_url: {server.url}\napi_key_env: null\ntimeout_s: 5\n")
        scorer = Scorer(
            ["crimson"],
            endpoint=str(endpoint),
            llm_cache=Path(work) / "cache.sqlite",
            n_bootstrap=0,
            metric_options={"crimson": {"progress": False}},
        )
        result = scorer(references, candidates)
        ours = {r["candidate"]: r for r in map(request_record, server.bodies)}
    theirs = {r["candidate"]: r for r in made["requests"]}
    mismatches = [f"request for {c[:40]!r}" for c in sorted(set(ours) | set(theirs)) if ours.get(c) != theirs.get(c)]
    refused = 0
    for i, (row, expected) in enumerate(zip(result.per_sample, made["results"])):
        if "refused" in expected:
            refused += 1
            if row["crimson"] is not None:
                mismatches.append(f"pair {i}: scored {row['crimson']}, the reference refuses")
            continue
        values = {"crimson": expected["crimson_score"]}
        for key in ("false_findings", "missing_findings", "attribute_errors"):
            values[f"crimson_{key}"] = expected["error_counts"][key]
            values[f"crimson_weighted_{key}"] = expected["weighted_error_counts"][key]
        for key, value in values.items():
            if row[key] is None or abs(row[key] - value) > 1e-9:
                mismatches.append(f"pair {i}: {key} {row[key]} against the reference's {value}")
    return {
        "pairs": len(references),
        "requests": len(ours),
        "refused_by_both": refused if refused == result.summary["crimson"]["not_scored"] else None,
        "scored_by_both": len(references) - refused,
        "mismatches": mismatches,
        "settings": sorted({json.dumps(r["settings"], sort_keys=True) for r in ours.values()}),
    }


def lookalike_calls(root: Path, n: int | None) -> tuple[list[dict], object]:
    """radmetrics' crimson on the look-alike's first `n` parity inputs (all: None), each generate call recorded as
    the reference runner records it. The look-alike is named by its path, so guidelines=false is given, as the
    reference drops them for its default model."""
    from transformers.generation.utils import GenerationMixin

    from parity.lookalikes import CRIMSON_REPO, snapshot
    from parity.make_crimson_fixture import lookalike_inputs
    from parity.reference._common import record_generate
    from radmetrics.inference.scoring.scorer import Scorer

    data, original, calls = lookalike_inputs(), GenerationMixin.generate, []
    n = n or len(data["references"])
    record_generate(calls)
    try:
        scorer = Scorer(
            ["crimson"],
            components={"crimson": str(snapshot(root, CRIMSON_REPO))},
            metric_options={"crimson": {"guidelines": False, "progress": False}},
            n_bootstrap=0,
        )
        result = scorer(data["references"][:n], data["candidates"][:n], context=data["contexts"][:n])
    finally:
        GenerationMixin.generate = original
    return calls, result


def compare_lookalike(
    variant: str,
    n: int | None = None,
    work: Path | None = None,
    perturb=None,
    answers: list[list[int]] | None = None,
) -> dict:
    """The look-alike's `variant` scored on the first `n` parity inputs (all: None) against the reference's fixture.
    `perturb` (logits -> logits) changes every step's logits before the processors, `answers` replaces the reference's
    token ids (the tests' noise and real-difference checks)."""
    from parity.decoding import ReferenceDecoding
    from parity.make_crimson_fixture import build_lookalike, lookalike_inputs
    from parity.reports import fingerprint

    made, data = fixture("lookalike"), lookalike_inputs()
    given = {
        "references": fingerprint(data["references"]),
        "candidates": fingerprint(data["candidates"]),
        "contexts": fingerprint([json.dumps(c) for c in data["contexts"]]),
    }
    if made["inputs"] != given:
        raise RuntimeError("the look-alike fixture was made on other inputs: rerun make_crimson_fixture.py")
    with tempfile.TemporaryDirectory(dir=work) as directory:
        root = Path(directory) / "lookalike"
        if build_lookalike(root, variant) != made["lookalike_digest"][variant]:
            raise RuntimeError(f"the {variant} look-alike differs from the fixture's: rerun make_crimson_fixture.py")
        expected = made["variants"][variant]
        answers = answers or [e.get("answer_ids") for e in expected]
        with ReferenceDecoding(answers, perturb=perturb) as decoding:
            calls, result = lookalike_calls(root, n)
    details, mismatches = result.details["crimson"], list(decoding.mismatches)
    if len(calls) != len(details):
        mismatches.append(f"{len(calls)} generate calls for {len(details)} pairs")
    for i, (call, detail, row, theirs) in enumerate(zip(calls, details, result.per_sample, expected)):
        if call["prompts"][0] != theirs["prompt_ids_sha256"] or call["tokens"][0] != theirs["prompt_tokens"]:
            mismatches.append(f"pair {i}: prompt token ids differ")
        if call["settings"] != theirs["settings"]:
            mismatches.append(f"pair {i}: generation settings {call['settings']} against {theirs['settings']}")
        if hashlib.sha256(detail["response"].encode()).hexdigest() != theirs["answer_sha256"]:
            mismatches.append(f"pair {i}: the answers differ")
        if answers[i] is not None and call["answers"][0] != theirs["answer_ids"]:
            mismatches.append(f"pair {i}: the answer's token ids differ")
        if (row["crimson"] is None) != ("refused" in theirs) or (
            row["crimson"] is not None and row["crimson"] != theirs["crimson_score"]
        ):
            mismatches.append(f"pair {i}: {row['crimson']} against {theirs.get('crimson_score', 'a refusal')}")
    with_context = sum(1 for c in data["contexts"][: len(details)] if c)
    return {
        "pairs": len(details),
        "with_context": with_context,
        "without_context": len(details) - with_context,
        "settings": expected[0]["settings"],
        "signature": result.signatures["crimson"],
        "mismatches": mismatches,
        "followed": sum(1 for a in answers[: len(details)] if a is not None),
        "steps": decoding.steps,
        "near_ties": decoding.near_ties,
        "smallest_margin": decoding.smallest_margin,
    }
