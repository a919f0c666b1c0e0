"""A chat-completions server on 127.0.0.1 for tests: it answers "echo: <first message>" (or what a `responder`
function makes of the messages: a stand-in judge for FineRadScore, RadFact or GREEN) and injects faults.

On the first sighting of a request (by the sha256 of its messages) it draws, with probability
`fault_rate`, one fault: 429 with Retry-After, 500, a timeout (sleeps past the client's timeout), a 200
with a malformed JSON body, or an answer that fails the test validator ("INVALID"); the retry (or the
re-prompt) then succeeds. It counts every request and every answer per request key, so a test can check
that a resumed run re-sent nothing already answered. `hang_after=N` makes it stop answering after N
answers (requests then wait until the server stops), to kill a client at a known point.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("rate_limit", "server_error", "timeout", "malformed_json", "invalid_answer")


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog (5) drops connections under 32 concurrent clients


class FaultServer:
    def __init__(
        self,
        fault_rate: float = 0.0,
        seed: int = 0,
        timeout_sleep: float = 1.5,
        hang_after: int | None = None,
        faults: tuple[str, ...] = FAULTS,
        responder: Callable[[list[dict]], str] | None = None,
    ):
        self.fault_rate, self.timeout_sleep, self.hang_after, self.faults = (
            fault_rate,
            timeout_sleep,
            hang_after,
            faults,
        )
        self.responder = responder or (lambda messages: f"echo: {messages[0]['content']}")
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.planned: dict[str, str | None] = {}
        self.requests = 0
        self.injected: Counter = Counter()
        self.answered: Counter = Counter()  # request key -> 200 answers sent
        self.bodies: list[dict] = []  # every request body, for tests of the request settings
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.handle(self, body)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def key(messages: list[dict]) -> str:
        return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()

    def handle(self, request: BaseHTTPRequestHandler, body: dict) -> None:
        messages = body["messages"]
        key = self.key(messages)
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            first = key not in self.planned
            if first:
                reprompt = (
                    len(messages) > 2 and self.key(messages[:-2]) in self.planned
                )  # the engine's re-prompt of an earlier request
                draw = self._rng.random() < self.fault_rate and not reprompt
                self.planned[key] = self._rng.choice(self.faults) if draw else None
            fault = self.planned[key] if first else None
            if self.hang_after is not None and sum(self.answered.values()) >= self.hang_after:
                fault = "hang"
            if fault:
                self.injected[fault] += 1
        if fault == "hang":
            self._stop.wait()
            return
        if fault == "rate_limit":
            return self._send(
                request, 429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"retry-after": "0.05"}
            )
        if fault == "server_error":
            return self._send(request, 500, {"error": {"message": "boom", "type": "server_error"}})
        if fault == "timeout":
            self._stop.wait(self.timeout_sleep)
            return self._send(request, 500, {"error": {"message": "too late"}})
        if fault == "malformed_json":
            return self._send_raw(request, 200, b'{"id": "x", "choices": [', {})
        text = "INVALID" if fault == "invalid_answer" else self.responder(messages)
        completion = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        with self._lock:
            self.answered[key] += 1
        self._send(request, 200, completion)

    @staticmethod
    def _send(request, status: int, payload: dict, headers: dict | None = None) -> None:
        FaultServer._send_raw(request, status, json.dumps(payload).encode(), headers or {})

    @staticmethod
    def _send_raw(request, status: int, data: bytes, headers: dict) -> None:
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


if __name__ == "__main__":  # a standalone server for manual runs: python tests/llm_fault_server.py
    with FaultServer(fault_rate=0.2) as s:
        print(s.url, flush=True)
        threading.Event().wait()
