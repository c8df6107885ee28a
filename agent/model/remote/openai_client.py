"""A ChatModel over an OpenAI-compatible HTTP server — vLLM first, any other for answering.

With vLLM (detected from its `/version` endpoint) every completion is token-exact: the request asks
for `return_token_ids` (prompt ids at the top level of the answer, completion ids in the choice,
the final EOS included, as the embedded engine does) and `logprobs` for each sampled token; JSON
schemas go through vLLM's `structured_outputs` (xgrammar; vLLM 0.32 takes "no free whitespace"
only from the server's --structured-outputs-config, which `serve-model` sets, matching the embedded
engine's grammar); a LoRA adapter is requested by using its name as `model`, and adapters are loaded and
unloaded at run time through `/v1/load_lora_adapter` (the server needs `--enable-lora` and
VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; `deepresearch serve-model` sets both).

Other servers (llama.cpp's server, Ollama, hosted APIs) get plain OpenAI requests: JSON schemas as
`response_format: json_schema`, logprobs when the server gives them. They return no token ids, so
`prompt_token_ids`/`completion_token_ids` are empty: fine for answering, not for training, and
runtime LoRA is vLLM-only. `timings` holds only `total_s` (the round trip) for either kind of server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import httpx
from deepresearch.agent.trace.redact import redact_urls

from ..base import ChatModel, ModelError, ScoringUnsupported
from ..types import ChatRequest, Completion, Timings

RETRY_STATUS = {500, 502, 503, 504}
_FINISH_REASONS = {"stop": "stop", "length": "length", "abort": "error", "error": "error"}


class OpenAIChatModel(ChatModel):
    writes = True  # a served model (an 8B on a GPU box) writes the report; agent.report.style = auto follows this

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "EMPTY",
        *,
        timeout_s: float = 600.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        adapter_paths: dict[str, Path] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.shown_url = redact_urls(self.base_url)  # for messages: a key can ride in the address
        self.model_name = model
        self._api_key = api_key
        self._timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        # Adapters we can load ourselves when the server does not know them yet (same machine).
        self._adapter_paths = dict(adapter_paths or {})
        self._loaded: set[str] = set()
        self._is_vllm: bool | None = None
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def server_root(self) -> str:
        """The server without the `/v1` suffix (where vLLM serves /health and /version)."""
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    # --- HTTP ---------------------------------------------------------------------------
    def _http(self) -> httpx.AsyncClient:
        # A client's connection pool belongs to the event loop that opened it.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._client = httpx.AsyncClient(timeout=self._timeout, headers=headers)
            self._client_loop = loop
        return self._client

    async def _request(self, method: str, url: str, payload: dict[str, Any] | None = None) -> httpx.Response:
        """Send with retries on connection errors and 5xx; raise ModelError with one line otherwise."""
        last_error = ""
        for attempt in range(self._max_retries + 1):
            if attempt:
                await asyncio.sleep(self._backoff_s * 2 ** (attempt - 1))
            try:
                response = await self._http().request(method, url, json=payload)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            except httpx.TimeoutException as exc:
                raise ModelError(f"model server {self.shown_url} timed out ({type(exc).__name__})") from exc
            if response.status_code in RETRY_STATUS:
                last_error = f"HTTP {response.status_code}: {_error_message(response)}"
                continue
            return response
        raise ModelError(
            f"model server {self.shown_url} unreachable or failing after {self._max_retries + 1} tries "
            f"({last_error}); "
            "start it with `deepresearch serve-model` or fix model.base_url"
        )

    async def is_vllm(self) -> bool:
        if self._is_vllm is None:
            response = await self._request("GET", f"{self.server_root}/version")
            try:
                self._is_vllm = response.status_code == 200 and "version" in response.json()
            except ValueError:
                self._is_vllm = False
        return self._is_vllm

    # --- ChatModel ----------------------------------------------------------------------
    async def complete(self, request: ChatRequest) -> Completion:
        adapter = self.resolve_adapter(request.adapter)
        vllm = await self.is_vllm()
        payload = self._payload(request, adapter, vllm)
        started = time.perf_counter()
        response = await self._request("POST", f"{self.base_url}/chat/completions", payload)
        if response.status_code == 404 and adapter is not None and adapter in self._adapter_paths:
            await self.load_adapter(adapter, self._adapter_paths[adapter])
            response = await self._request("POST", f"{self.base_url}/chat/completions", payload)
        if response.status_code == 404:
            raise ModelError(
                f"model server {self.shown_url} does not serve model/adapter {payload['model']!r}: "
                f"{_error_message(response)}"
            )
        if response.status_code != 200:
            raise ModelError(f"model server {self.shown_url} refused the request: {_error_message(response)}")
        return self._completion(response.json(), request, adapter, time.perf_counter() - started)

    def _payload(self, request: ChatRequest, adapter: str | None, vllm: bool) -> dict[str, Any]:
        sampling = request.sampling
        payload: dict[str, Any] = {
            "model": adapter or self.model_name,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "logprobs": True,
        }
        if sampling.seed is not None:
            payload["seed"] = sampling.seed
        if sampling.stop:
            payload["stop"] = sampling.stop
        if vllm:
            payload["return_token_ids"] = True
            if request.json_schema is not None:
                payload["structured_outputs"] = {"json": request.json_schema, "disable_any_whitespace": True}
        elif request.json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.json_schema, "strict": True},
            }
        return payload

    def _completion(self, data: dict[str, Any], request: ChatRequest, adapter: str | None, took_s: float) -> Completion:
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"model server {self.shown_url} sent an answer without a choice") from exc
        logprob_items = (choice.get("logprobs") or {}).get("content") or []
        parsed = None
        if request.json_schema is not None:
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = None
        return Completion(
            text=text,
            parsed=parsed,
            prompt_token_ids=list(data.get("prompt_token_ids") or []),
            completion_token_ids=list(choice.get("token_ids") or []),
            logprobs=[float(item["logprob"]) for item in logprob_items],
            model=self.model_name,
            adapter=adapter,
            finish_reason=_FINISH_REASONS.get(choice.get("finish_reason") or "stop", "stop"),  # type: ignore[arg-type]
            timings=Timings(total_s=took_s),
        )

    async def score(self, prompt: str, continuations: list[str], adapter: str | None = None) -> list[list[float]]:
        """vLLM's completions endpoint echoes the prompt's token log-probabilities; other servers cannot."""
        if not await self.is_vllm():
            raise ScoringUnsupported(f"model server {self.shown_url} is not vLLM: it cannot score text")
        adapter = self.resolve_adapter(adapter)
        out = []
        for tail in continuations:
            payload = {"model": adapter or self.model_name, "prompt": prompt + tail, "max_tokens": 1,
                       "temperature": 0.0, "echo": True, "logprobs": 0}
            response = await self._request("POST", f"{self.base_url}/completions", payload)
            if response.status_code != 200:
                raise ModelError(f"model server {self.shown_url} refused to score: {_error_message(response)}")
            out.append(continuation_logprobs(response.json(), len(prompt), len(prompt) + len(tail)))
        return out

    # --- adapters -------------------------------------------------------------------------
    async def load_adapter(self, name: str, path: Path) -> None:
        """Load (or replace in place) a LoRA adapter; `path` must be readable by the server."""
        payload = {"lora_name": name, "lora_path": str(Path(path).resolve()), "load_inplace": True}
        response = await self._request("POST", f"{self.base_url}/load_lora_adapter", payload)
        if response.status_code != 200:
            raise ModelError(
                f"model server {self.shown_url} could not load adapter {name!r}: {_error_message(response)}"
            )
        self._loaded.add(name)
        self._adapter_paths[name] = Path(path)

    async def unload_adapter(self, name: str) -> None:
        response = await self._request("POST", f"{self.base_url}/unload_lora_adapter", {"lora_name": name})
        if response.status_code != 200:
            raise ModelError(
                f"model server {self.shown_url} could not unload adapter {name!r}: {_error_message(response)}"
            )
        self._loaded.discard(name)
        self._adapter_paths.pop(name, None)
        if self.active_adapter == name:
            self.active_adapter = None

    def adapters(self) -> list[str]:
        """Adapters this client loaded or saw in the last `refresh_adapters()`."""
        return sorted(self._loaded)

    async def refresh_adapters(self) -> list[str]:
        """Ask the server which LoRA adapters it serves (models with a parent)."""
        response = await self._request("GET", f"{self.base_url}/models")
        if response.status_code != 200:
            raise ModelError(f"model server {self.shown_url} cannot list models: {_error_message(response)}")
        entries = response.json().get("data") or []
        self._loaded = {e["id"] for e in entries if e.get("parent")}
        return self.adapters()

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(RuntimeError):  # its event loop is already closed: nothing to release
                await client.aclose()


def continuation_logprobs(data: dict[str, Any], start: int, end: int) -> list[float]:
    """The echoed log-probabilities of the tokens that begin at or after character `start` (the
    continuation) and before `end` (the one generated token is not part of it)."""
    try:
        info = data["choices"][0]["logprobs"]
        pairs = zip(info["text_offset"], info["token_logprobs"], strict=False)
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelError("the model server's completion has no echoed logprobs") from exc
    return [float(lp) for offset, lp in pairs if start <= offset < end and lp is not None]


def _error_message(response: httpx.Response) -> str:
    """The server's own error text, on one line."""
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else body.get("error")
        message = message or body.get("message") or body.get("detail") or json.dumps(body)
    except ValueError:
        message = response.text or response.reason_phrase
    return " ".join(str(message).split())[:300]
