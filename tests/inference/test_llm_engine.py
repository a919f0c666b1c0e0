"""The LLM engine against a real chat-completions server on 127.0.0.1 that injects faults."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_fault_server import FaultServer

from radmetrics.inference.llm.endpoint import Endpoint, EndpointError
from radmetrics.inference.llm.engine import LLMEngine, LLMTask

pytest.importorskip("openai")


def echo_validator(text: str) -> str:
    if not text.startswith("echo: "):
        raise ValueError(f"expected 'echo: ...', got {text[:20]!r}")
    return text[len("echo: ") :]


def tasks(n: int) -> list[LLMTask]:
    return [LLMTask(f"item-{i}", [{"role": "user", "content": f"report {i}"}], echo_validator) for i in range(n)]


def endpoint(server: FaultServer, **overrides) -> Endpoint:
    values = dict(
        model="test-model",
        base_url=server.url,
        api_key_env="RADMETRICS_TEST_KEY",
        max_in_flight=32,
        timeout_s=1.0,
        max_retries=6,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    return Endpoint(**{**values, **overrides})


def test_500_requests_with_20_percent_faults_all_answered(tmp_path, monkeypatch):
    monkeypatch.setenv("RADMETRICS_TEST_KEY", "sk-secret-never-stored")
    with FaultServer(fault_rate=0.2, seed=1, timeout_sleep=2.0) as server:
        engine = LLMEngine(endpoint(server), tmp_path / "cache.sqlite", max_reprompts=2, progress=False)
        results = engine.run(tasks(500), manifest=tmp_path / "manifest.json")
    totals = engine.totals
    assert totals.answered == 500 and totals.failed == 0 and not totals.failures
    assert [r.parsed for r in results] == [f"report {i}" for i in range(500)]
    assert 60 < sum(server.injected.values()) < 140  # about 20% of 500
    assert set(totals.transient_errors) == {"rate_limited", "http_500", "timeout", "malformed_response"}
    assert totals.reprompts == server.injected["invalid_answer"]
    assert totals.requests_sent >= server.requests  # a request that timed out client-side may never reach the server
    manifest = (tmp_path / "manifest.json").read_text()
    assert json.loads(manifest)["totals"]["answered"] == 500
    for path in (tmp_path / "manifest.json", tmp_path / "cache.sqlite"):
        assert b"sk-secret-never-stored" not in path.read_bytes()


def test_items_that_cannot_be_answered_are_listed_not_defaulted(tmp_path):
    with FaultServer(fault_rate=0.3, seed=2, faults=("server_error", "invalid_answer")) as server:
        engine = LLMEngine(endpoint(server, max_retries=0), tmp_path / "cache.sqlite", max_reprompts=0, progress=False)
        results = engine.run(tasks(100))
    failed = {r.id for r in results if not r.ok}
    assert engine.totals.answered + engine.totals.failed == 100 and len(failed) == engine.totals.failed > 0
    assert {f["id"] for f in engine.totals.failures} == failed
    reasons = {f["error"].split(":")[0] for f in engine.totals.failures}
    assert reasons <= {"http_500", "invalid answer after 0 re-prompts"} and len(reasons) == 2
    assert all(r.parsed is None for r in results if not r.ok)


def test_cache_answers_a_rerun_without_requests(tmp_path):
    with FaultServer() as server:
        LLMEngine(endpoint(server), tmp_path / "cache.sqlite", progress=False).run(tasks(20))
        before = server.requests
        engine = LLMEngine(endpoint(server), tmp_path / "cache.sqlite", progress=False)
        results = engine.run(tasks(20))
    assert server.requests == before and engine.totals.cache_hits == 20 and all(r.from_cache for r in results)
    with FaultServer(fault_rate=1.0, faults=("invalid_answer",)) as server:  # a refused answer is not replayed
        LLMEngine(endpoint(server), tmp_path / "refused.sqlite", max_reprompts=0, progress=False).run(tasks(3))
        engine = LLMEngine(endpoint(server), tmp_path / "refused.sqlite", max_reprompts=0, progress=False)
        results = engine.run(tasks(3))
        assert server.requests == 6 and engine.totals.cache_hits == 0 and all(r.ok for r in results)
    with FaultServer() as server:  # other generation parameters are another key
        engine = LLMEngine(
            endpoint(server, generation={"temperature": 0.7}), tmp_path / "cache.sqlite", progress=False
        )
        engine.run(tasks(5))
        assert server.requests == 5


KILLED_CLIENT = """
import sys
sys.path.insert(0, {tests!r})
from radmetrics.inference.llm.endpoint import Endpoint
from radmetrics.inference.llm.engine import LLMEngine
from test_llm_engine import tasks
LLMEngine(Endpoint(model="test-model", base_url={url!r}, api_key_env=None, max_in_flight=8, timeout_s=60),
          {cache!r}, progress=False).run(tasks(100))
"""


def test_killed_run_resumes_without_resending_answered_requests(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with FaultServer(hang_after=30) as server:
        script = KILLED_CLIENT.format(tests=str(Path(__file__).parent), url=server.url, cache=str(cache))
        client = subprocess.Popen(
            [sys.executable, "-c", script],
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(str(p) for p in (Path(__file__).parent, Path(__file__).parents[1])),
            },
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with sqlite3.connect(cache) as db:
                    if db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] >= 30:
                        break
            except sqlite3.OperationalError:  # the client has not created its table yet
                pass
            time.sleep(0.05)
        client.send_signal(signal.SIGKILL)
        client.wait()
        answered_before = sum(server.answered.values())
        assert answered_before == 30
        server.hang_after = None
        engine = LLMEngine(endpoint(server), cache, progress=False)
        results = engine.run(tasks(100))
    assert all(r.ok for r in results) and engine.totals.cache_hits == 30
    assert max(server.answered.values()) == 1, "an answered request was sent again"
    assert sum(server.answered.values()) == 100


def test_endpoint_yaml_is_checked(tmp_path, monkeypatch):
    (tmp_path / "e.yaml").write_text("model: gpt-4o\nmax_in_flight: 4\ngeneration: {temperature: 0}\n")
    e = Endpoint.from_yaml(tmp_path / "e.yaml")
    assert e.name == "gpt-4o" and e.generation == {"temperature": 0}
    (tmp_path / "bad.yaml").write_text("model: x\nmax_inflight: 4\n")
    with pytest.raises(EndpointError, match="unknown endpoint keys"):
        Endpoint.from_yaml(tmp_path / "bad.yaml")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EndpointError, match="OPENAI_API_KEY is not set"):
        e.api_key()


def test_local_hf_backend_generates_in_batches(tmp_path, iu_reports):
    from transformers import LlamaForCausalLM

    from radmetrics.inference.llm.local import HFBackend, cut_at_stop
    from radmetrics.training.tiny import tiny_llama_config, train_bpe_tokenizer

    tokenizer = train_bpe_tokenizer([r.text for r in iu_reports[:300]], tmp_path / "tok", vocab_size=500)
    model = LlamaForCausalLM(
        tiny_llama_config(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    )
    e = Endpoint(model=str(tmp_path / "tok"), backend="hf", batch_size=4, generation={"max_tokens": 6})
    backend = HFBackend(e, model, tokenizer)
    batches = []
    generate = backend.generate
    backend.generate = lambda conversations, generation: (
        batches.append(len(conversations)) or generate(conversations, generation)
    )
    engine = LLMEngine(e, tmp_path / "cache.sqlite", progress=False, backend=backend)
    short = [LLMTask(f"t{i}", [{"role": "user", "content": "No pleural effusion." * (i % 3 + 1)}]) for i in range(10)]
    results = engine.run(short)
    assert all(r.ok and isinstance(r.text, str) for r in results) and batches == [4, 4, 2]
    assert 0 < engine.totals.completion_tokens <= 60 and engine.totals.prompt_tokens > 0
    assert LLMEngine(e, tmp_path / "cache.sqlite", progress=False, backend=backend).run(short)[0].from_cache
    assert cut_at_stop("a [END] b", ["[END]"]) == "a " and cut_at_stop("abc", None) == "abc"
