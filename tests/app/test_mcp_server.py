"""`deepresearch mcp` driven by the official MCP SDK's client: over stdio (a real child process, as Claude
Desktop starts it) and over streamable HTTP. One test researches with the real embedded 135M model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli, one_error_line
from .servers import server_process
from .test_serve_api import QUESTION, fake_env

TOOLS = {"research", "search_index", "get_report"}


def stdio(env: dict[str, str]) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "deepresearch", "mcp"], env=env)
    return Client(params, read_timeout_seconds=300)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_research_over_stdio_with_the_embedded_model_sends_progress_and_keeps_the_report(tmp_path: Path):
    env = clean_env(tmp_path, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                    DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with stdio(env) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        question = "In what year did the playwright who wrote The City Heiress die?"
        result = await client.call_tool("research", {"question": question, "offline": True},
                                        progress_callback=on_progress)
        assert not result.is_error, text_of(result)
        answer = result.structured_content
        assert answer["answer"] and answer["verified_citations"] >= 1, answer["report"]
        assert answer["report"].startswith(f"# {question}")
        # One notification per graph event, in order, from the plan to the run's end.
        assert [v for v, _ in progress] == list(range(1, len(progress) + 1))
        assert progress[0][1].startswith("plan: ") and any("evidence from" in (m or "") for _, m in progress)
        assert progress[-1][1] == f"run {answer['status']}"

        report = await client.call_tool("get_report", {"run_id": answer["run_id"]})
        assert text_of(report) == answer["report"]
        hits = await client.call_tool("search_index", {"query": "The City Heiress", "k": 3})
        assert not hits.is_error and any("Heiress" in h["title"] for h in hits.structured_content["result"])


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("research", {"question": "   "}, "the question is empty"),
    ("research", {"question": "q?", "index": "nosuchindex"}, "no index named 'nosuchindex'"),
    ("research", {"question": "q?", "max_time": 0}, "max_time"),
    ("research", {}, "question"),
    ("search_index", {"query": ""}, "the query is empty"),
    ("search_index", {"query": "x", "k": 0}, "k: give 1 to 50"),
    ("search_index", {"query": "x", "index": "nosuchindex"}, "no index named 'nosuchindex'"),
    ("get_report", {"run_id": "nosuchrun"}, "no run with id 'nosuchrun'"),
    ("get_report", {"run_id": "x", "format": "rtf"}, "format"),
])
async def test_bad_tool_input_is_an_error_result_of_one_line(tmp_path: Path, tool, arguments, message):
    async with stdio(clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai",
                               DEEPRESEARCH_MODEL__BASE_URL="http://127.0.0.1:9/v1")) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error and message in text_of(result), text_of(result)
        assert "Traceback" not in text_of(result)
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS  # the server is still up


async def test_streamable_http_needs_the_token_and_researches(tmp_path: Path):
    with fake_openai_server() as fake:
        env = fake_env(tmp_path, fake.base_url, DEEPRESEARCH_API__TOKEN="s3cret")
        with server_process("mcp", "--transport", "http", "--port", "0", env=env, stream="stderr") as url:
            assert httpx2.post(f"{url}/mcp", json={}).status_code == 401
            async with (httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=120) as http,
                        Client(streamable_http_client(f"{url}/mcp", http_client=http),
                               read_timeout_seconds=120) as client):
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                result = await client.call_tool("research", {"question": QUESTION, "offline": True})
                assert not result.is_error, text_of(result)
                assert result.structured_content["report"].startswith(f"# {QUESTION}")


def test_mcp_refuses_a_non_loopback_address_without_a_token(tmp_path: Path):
    proc = cli("mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0", env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "without a token" in one_error_line(proc)


def test_mcp_with_an_unknown_transport_is_one_line_exit_2(tmp_path: Path):
    proc = cli("mcp", "--transport", "carrier-pigeon", env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "--transport" in one_error_line(proc)
