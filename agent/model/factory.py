"""Build the configured ChatModel: the embedded engine or a client for a vLLM/OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

from ..config import ModelSettings
from .base import ChatModel, ModelError
from .embedded.loaders.packaged_model import embedded_model_dir

__all__ = ["build_model", "embedded_model_dir"]


def build_model(settings: ModelSettings, *, cache_dir: Path, adapters_dir: Path | None = None) -> ChatModel:
    """The model the settings ask for.

    embedded: loads the converted safetensors (converting the packaged GGUF on first use).
    openai: a client for `settings.base_url`.
    `settings.adapter`, when set, becomes the active adapter: the embedded engine loads it from
    `adapters_dir/<name>`; the client requests it by name and, if the server does not know it and
    `adapters_dir/<name>` exists, loads it there at run time.
    """
    if settings.backend == "embedded":
        return _build_embedded(settings, cache_dir=cache_dir, adapters_dir=adapters_dir)
    if not settings.base_url:
        raise ModelError("model.backend is 'openai' but model.base_url is not set (e.g. http://127.0.0.1:8000/v1)")
    from .remote.openai_client import OpenAIChatModel

    adapter_paths = {}
    if settings.adapter and adapters_dir is not None and (adapters_dir / settings.adapter).is_dir():
        adapter_paths[settings.adapter] = adapters_dir / settings.adapter
    client = OpenAIChatModel(
        settings.base_url,
        settings.name,
        settings.api_key.get_secret_value(),
        timeout_s=settings.request_timeout_s,
        max_retries=settings.max_retries,
        adapter_paths=adapter_paths,
    )
    client.active_adapter = settings.adapter
    return client


def _build_embedded(settings: ModelSettings, *, cache_dir: Path, adapters_dir: Path | None) -> ChatModel:
    from .embedded.chat_model import EmbeddedChatModel
    from .embedded.config import EngineConfig

    # The embedded engine only runs the packaged model, whatever `settings.name` says.
    model_dir = embedded_model_dir(cache_dir)
    config = EngineConfig(
        max_batch=settings.max_batch, threads=settings.threads, forward=settings.forward,
        jump_forward=settings.jump_forward, prefix_cache=settings.prefix_cache,
        prompt_cache_tokens=settings.prompt_cache_tokens, reuse_greedy=settings.reuse_greedy,
        gguf_products=settings.gguf_products, bf16_products=settings.bf16_products,
        store_dir=model_dir,  # prefixes and grammars beside the weights they were computed from
    )
    model = EmbeddedChatModel.load(model_dir, config)
    if settings.adapter:
        path = (adapters_dir / settings.adapter) if adapters_dir is not None else None
        if path is None or not path.is_dir():
            raise ModelError(f"model.adapter is {settings.adapter!r} but no adapter directory {path} exists")
        _load_adapter_now(model, settings.adapter, path)
        model.active_adapter = settings.adapter
    return model


def _load_adapter_now(model: ChatModel, name: str, path: Path) -> None:
    """build_model is synchronous; the embedded engine applies the load on its worker thread."""
    from .embedded.chat_model import EmbeddedChatModel

    assert isinstance(model, EmbeddedChatModel)
    model.load_adapter_blocking(name, path)
