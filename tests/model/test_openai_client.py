"""The OpenAI-compatible client without vLLM: unreachable servers, retries on 5xx, plain OpenAI servers.

A small local HTTP server plays a non-vLLM OpenAI-compatible server (no /version, no token ids) and
records what the client sent; the real vLLM server is exercised in test_vllm.py.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from deepresearch.agent.model.base import BASE_MODEL, ModelError
from deepresearch.agent.model.remote.openai_client import OpenAIChatModel

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PlainOpenAIServer(ThreadingHTTPServer):
    """Answers /v1/chat/completions like llama.cpp's server would; fails the first `failures` calls with 503."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.failures = failures
        self.bodies: list[dict] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: PlainOpenAIServer

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(404, {"error": {"message": "Not Found"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        if self.server.failures > 0:
            self.server.failures -= 1
            self._send(503, {"error": {"message": "loading model"}})
            return
        if body["model"] != "tiny":
            self._send(404, {"error": {"message": f"model '{body['model']}' not found"}})
            return
        self._send(200, {
            "choices": [{
                "message": {"role": "assistant", "content": '{"city": "Kyoto"}'},
                "finish_reason": "stop",
                "logprobs": {"content": [{"token": "{", "logprob": -0.5}, {"token": "city", "logprob": -0.25}]},
            }],
        })  # fmt: skip


@pytest.fixture
def plain_server() -> Iterator[PlainOpenAIServer]:
    server = PlainOpenAIServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


async def test_unreachable_server_is_one_clear_error():
    client = OpenAIChatModel(f"http://127.0.0.1:{free_port()}/v1", "tiny", max_retries=2, backoff_s=0.01)
    with pytest.raises(ModelError, match=r"unreachable or failing after 3 tries .*serve-model") as caught:
        await client.chat([{"role": "user", "content": "hi"}])
    assert "\n" not in str(caught.value)
    await client.close()


async def test_plain_openai_server_answers_without_token_ids(plain_server):
    client = OpenAIChatModel(plain_server.base_url, "tiny", api_key="k", max_retries=0)
    completion = await client.chat([{"role": "user", "content": "a city?"}], schema=SCHEMA)
    assert completion.parsed == {"city": "Kyoto"} and completion.model == "tiny"
    assert completion.prompt_token_ids == [] and completion.completion_token_ids == []
    assert completion.logprobs == [-0.5, -0.25]
    sent = plain_server.bodies[-1]
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "structured_outputs" not in sent and "return_token_ids" not in sent  # vLLM-only fields
    await client.close()


async def test_5xx_is_retried_with_backoff(plain_server):
    plain_server.failures = 2
    client = OpenAIChatModel(plain_server.base_url, "tiny", max_retries=3, backoff_s=0.01)
    completion = await client.chat([{"role": "user", "content": "a city?"}])
    assert completion.text == '{"city": "Kyoto"}'
    assert len(plain_server.bodies) == 3
    plain_server.failures = 10
    with pytest.raises(ModelError, match="HTTP 503: loading model"):
        await client.chat([{"role": "user", "content": "a city?"}])
    await client.close()


async def test_unknown_model_or_adapter_is_one_clear_error(plain_server):
    client = OpenAIChatModel(plain_server.base_url, "tiny", max_retries=0)
    with pytest.raises(ModelError, match="does not serve model/adapter 'no-such-adapter'") as caught:
        await client.chat([{"role": "user", "content": "hi"}], adapter="no-such-adapter")
    assert "\n" not in str(caught.value)
    await client.close()


async def test_base_model_request_overrides_the_active_adapter(plain_server):
    client = OpenAIChatModel(plain_server.base_url, "tiny", max_retries=0)
    client.active_adapter = "grpo-0001"  # what `ask` sets for a served adapter
    with pytest.raises(ModelError, match="'grpo-0001'"):  # a request naming none gets the active adapter
        await client.chat([{"role": "user", "content": "hi"}])
    completion = await client.chat([{"role": "user", "content": "hi"}], adapter=BASE_MODEL)
    assert plain_server.bodies[-1]["model"] == "tiny" and completion.adapter is None
    await client.close()


async def test_a_plain_server_cannot_score(plain_server: PlainOpenAIServer) -> None:
    from deepresearch.agent.model.base import ScoringUnsupported

    client = OpenAIChatModel(plain_server.base_url, "m", "k", max_retries=0)
    with pytest.raises(ScoringUnsupported, match="not vLLM"):
        await client.score("Answer:", [" yes"])


def test_echoed_logprobs_of_the_continuation_only() -> None:
    from deepresearch.agent.model.remote.openai_client import continuation_logprobs

    # vLLM's completions echo for prompt "Answer:" + " 1689" with one generated token after it.
    data = {"choices": [{"logprobs": {"text_offset": [0, 6, 7, 9, 11], "tokens": ["Answer", ":", " 16", "89", "."],
                                      "token_logprobs": [None, -0.5, -1.0, -0.25, -3.0]}}]}
    assert continuation_logprobs(data, start=7, end=11) == [-1.0, -0.25]
    with pytest.raises(ModelError, match="no echoed logprobs"):
        continuation_logprobs({"choices": []}, 0, 1)
