"""A loopback OpenAI-compatible server that answers every structured request with the simplest valid
instance of its JSON schema, and records the Authorization headers it was sent.

It lets the real `deepresearch ask` run end to end (graph, tools, trace) in seconds, without a model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The first value a JSON schema allows (enums pick their first option, arrays their minimum length)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: instance(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {}), defs) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return None


class FakeOpenAIServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hold: Callable[[dict[str, Any]], bool] | None = None, then_answer: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.authorizations: list[str] = []
        # `hold(request)` true: that request is not answered (its client waits, e.g. to be killed mid-call);
        # `held` is set when the first such request arrives. With `then_answer`, `release` lets it be answered.
        self.hold = hold
        self.then_answer = then_answer
        self.held = threading.Event()
        self.release = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAIServer

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self.server.authorizations.append(self.headers.get("Authorization", ""))
        self._send(404, {"error": {"message": "Not Found"}})  # no /version: a plain OpenAI server

    def do_POST(self) -> None:  # noqa: N802
        self.server.authorizations.append(self.headers.get("Authorization", ""))
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if not raw:  # the client was killed before it sent the body
            return
        body = json.loads(raw)
        if self.server.hold is not None and self.server.hold(body):
            self.server.held.set()
            self.server.release.wait(120)  # no answer meanwhile: the client waits (or is killed)
            if not self.server.then_answer:
                return
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        content = json.dumps(instance(schema)) if schema else "x"
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop",
                                      "logprobs": {"content": [{"token": "x", "logprob": -0.5}]}}]})


@contextmanager
def fake_openai_server(hold: Callable[[dict[str, Any]], bool] | None = None,
                       then_answer: bool = False) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(hold, then_answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
