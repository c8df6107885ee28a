"""`deepresearch mcp` over stdio, answering every line a client sends.

The SDK's stdio transport (mcp 2.x) turns a line it cannot read into an exception on the read stream, and
its server loop drops it (python-sdk issue #2751): garbage got no JSON-RPC error, and a tool call whose
argument held a lone surrogate ("\\ud800", which the SDK's JSON parser refuses) was never answered, so the
client waited forever. Here a relay between the transport and the server answers each such line: -32700
for a line that is not JSON, and for a request that is JSON but not readable by the SDK (a lone surrogate,
NaN, too deep) an error with the request's own id (-32602 when the problem sits in its params), so the
call ends; -32600 for JSON that is no JSON-RPC message. A malformed *response* is never answered: two
peers answering each other's errors would never stop.

The relay runs the SDK's low-level server the way `MCPServer.run_stdio_async` does; the high-level server
offers no hook for the transport's exceptions, hence `_lowlevel_server` (pinned by tests/app/test_mcp_stdio.py).
"""

from __future__ import annotations

import json
import logging
from contextlib import suppress
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

log = logging.getLogger(__name__)
SURROGATE = "a string holds a lone surrogate, which is not valid Unicode"


def _printable(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return flat[:limit]


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def _request_id(message: Any) -> int | str | None:
    """The id to answer with: a request's own id when it is a usable one, else None (JSON null)."""
    if not isinstance(message, dict):
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str) or _has_surrogate(rid):
        return None
    return rid


def _whole_message(errors: list[Any]) -> Any:
    """The parsed line, from a union validation error: a member's own type error or a missing top-level
    field carries the whole object as its input (a field's type error carries only that field)."""
    for error in errors:
        loc = error.get("loc", ())
        if len(loc) <= 1 or (len(loc) == 2 and error.get("type") == "missing"):
            return error.get("input")
    return None


def _error(rid: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=_printable(message)))


def reply_to_unreadable(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering a line the transport could not read (None: answer nothing)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid" and isinstance(first.get("input"), str):
        line = first["input"]
        if not line.strip():
            return None  # a blank line is no message
        try:
            message = json.loads(line)  # laxer than the SDK: it reads lone surrogates, NaN, deep nesting
        except (ValueError, RecursionError):
            return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({first.get('msg', '')})")
        why = SURROGATE if _has_surrogate(message) else str(first.get("msg", "unreadable JSON"))
        code = PARSE_ERROR
        if isinstance(message, dict) and "params" in message and _has_surrogate(message.get("params")):
            code = INVALID_PARAMS
    elif first:  # JSON, but no JSON-RPC message
        message, why, code = _whole_message(errors), "not a JSON-RPC 2.0 message", INVALID_REQUEST
    else:
        return _error(None, PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
        log.warning("dropped an unreadable response from the client: %s", _printable(why))
        return None
    rid = _request_id(message)
    if isinstance(message, dict) and "method" in message and "id" not in message:
        return None  # a notification is never answered, not even with an error
    label = {PARSE_ERROR: "Parse error", INVALID_PARAMS: "Invalid params", INVALID_REQUEST: "Invalid request"}[code]
    return _error(rid, code, f"{label}: {why}")


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` on stdin/stdout until the client closes stdin; every unreadable line is answered."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 -- no public hook for the transport's exceptions
    async with stdio_server() as (wire_in, wire_out):
        to_server, from_relay = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with to_server:  # closing it at the client's EOF ends the server's loop
                async for item in wire_in:
                    if not isinstance(item, Exception):
                        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                            await to_server.send(item)
                        continue
                    reply = reply_to_unreadable(item)
                    log.debug("unreadable line from the client: %r", item)
                    if reply is not None:
                        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                            await wire_out.send(SessionMessage(reply))

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            await lowlevel.run(from_relay, wire_out, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()
