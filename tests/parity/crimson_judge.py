"""The CRIMSON parity check's shared parts: its pairs (IU X-ray reports, each against the next) and the scripted judge
that answers each pair's prompt with its answer of `crimson_answers.answers()`."""

from __future__ import annotations

import hashlib
import json
import re

from parity.crimson_answers import answers
from parity.reports import iu_reports

_CANDIDATE = re.compile(r"Predicted Findings \(Candidate\):\n(.*?)\n\nTask:", re.S)


def pairs() -> tuple[list[str], list[str]]:
    reports = iu_reports(len(answers()) + 1)
    return reports[:-1], reports[1:]


def judge():
    """A responder for tests/llm_fault_server.FaultServer: the answer scripted for the prompt's candidate."""
    scripted = dict(zip(pairs()[1], answers()))

    def respond(messages: list[dict]) -> str:
        return scripted[_CANDIDATE.search(messages[-1]["content"]).group(1)]

    return respond


def request_record(body: dict) -> dict:
    """What a request sent, in short: its settings, and its messages by sha256, keyed by the candidate."""
    messages = body["messages"]
    return {
        "candidate": _CANDIDATE.search(messages[-1]["content"]).group(1),
        "messages_sha256": hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest(),
        "settings": {k: v for k, v in sorted(body.items()) if k not in ("messages", "stream")},
    }
