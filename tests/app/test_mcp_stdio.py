"""`deepresearch mcp` over stdio answers every line (issue 72, item 5): a real child process, raw JSON-RPC
lines on its stdin. Before, a tool call whose argument held a lone surrogate got no reply at all (the
client waited forever) and garbage lines got no -32700 parse error."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from .helpers import clean_env

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


class RawClient:
    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any] | None:
        """The next line the server writes, parsed; None if it writes nothing within `timeout`."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return json.loads(self.proc.stdout.readline()) if ready else None


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    env = clean_env(tmp_path_factory.mktemp("mcp-stdio"), DEEPRESEARCH_MODEL__BACKEND="openai",
                    DEEPRESEARCH_MODEL__BASE_URL="http://127.0.0.1:9/v1")
    proc = subprocess.Popen([sys.executable, "-m", "deepresearch", "mcp"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    raw = RawClient(proc)
    try:
        raw.send(json.dumps(INITIALIZE).encode())
        assert raw.reply(120)["id"] == 0
        raw.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield raw
    finally:
        proc.stdin.close()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def call(rid: int, tool: str, arguments: str) -> bytes:
    """A tools/call line with `arguments` as raw JSON text (so it can hold what json.dumps would not write)."""
    return (f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/call", '
            f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}').encode()


@pytest.mark.parametrize(("tool", "arguments"), [
    ("search_index", '{"query": "x\\ud800"}'),
    ("research", '{"question": "Who designed \\udfff the Analytical Engine?", "offline": true}'),
    ("get_report", '{"run_id": "\\ud83d"}'),
])
def test_a_tool_call_with_a_lone_surrogate_gets_an_error_reply(client, tool, arguments):
    client.send(call(7, tool, arguments))
    reply = client.reply()
    assert reply is not None, "no reply: the client would wait forever"
    assert reply["id"] == 7 and reply["error"]["code"] == -32602
    assert "lone surrogate" in reply["error"]["message"]
    client.send(b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}')  # and the server goes on
    assert client.reply()["id"] == 8


@pytest.mark.parametrize("line", [b"this is not json", b'{"jsonrpc": "2.0", "id": 5, "meth', b"\x00\xff\xfe",
                                  b"{" * 50_000])
def test_a_garbage_line_gets_a_parse_error(client, line):
    client.send(line)
    reply = client.reply()
    assert reply is not None and reply["id"] is None and reply["error"]["code"] == -32700


def test_json_that_is_no_request_gets_invalid_request_with_its_id(client):
    client.send(b'{"jsonrpc": "2.0", "id": 9, "method": 5}')
    assert client.reply() == {"jsonrpc": "2.0", "id": 9,
                              "error": {"code": -32600, "message": "Invalid request: not a JSON-RPC 2.0 message"}}


def test_nothing_answers_a_notification_a_response_or_a_blank_line(client):
    for line in (b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}',
                 b'{"jsonrpc": "2.0", "id": 3, "result": {"a": "\\ud800"}}', b"   "):
        client.send(line)
    client.send(b'{"jsonrpc": "2.0", "id": 11, "method": "ping"}')
    assert client.reply()["id"] == 11  # the first answer is the ping's: the three lines got none


def test_the_relay_runs_the_sdks_own_low_level_server():
    # serve_stdio reaches the low-level server the way MCPServer.run_stdio_async does; pin that it exists.
    server: MCPServer = MCPServer("pin")
    assert callable(server._lowlevel_server.run)  # noqa: SLF001
    assert callable(server._lowlevel_server.create_initialization_options)  # noqa: SLF001


def test_a_deeply_nested_request_gets_an_error_with_its_id():
    from deepresearch.app.service.mcp_stdio import reply_to_unreadable

    line = '{"jsonrpc": "2.0", "id": 12, "method": "ping", "params": {"a": ' + "[" * 300 + "]" * 300 + "}}"
    with pytest.raises(ValidationError) as caught:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    reply = reply_to_unreadable(caught.value)
    assert reply is not None and reply.id == 12 and reply.error.code == -32700
