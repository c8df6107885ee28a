"""The weights the trainer starts from, when answers come from a model server: the served model's own.

The update must run on the weights the server samples from, or the logged logprobs and the trainer's
disagree. vLLM says what it serves in `/v1/models`: the base model's card has `root` = the `--model`
it was started with (a local directory or a Hugging Face id; adapters' cards have a `parent`). The
`MODEL` environment variable (docker-compose.yml passes the same value to both services) is the
fallback when the server does not say. A directory is used as is; a Hugging Face id is looked up in
the Hugging Face cache the two services share — the snapshot the server downloaded, never a newer
revision the Hub may have since — and downloaded only when it is not cached and HF_HUB_OFFLINE is off.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx

# Config, weight index, weights and the tokenizer (the grammar masks load it) in its usual file forms.
WEIGHT_FILES = ["*.json", "*.safetensors", "tokenizer.model", "*.tiktoken", "merges.txt", "vocab.txt"]
_HF_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


class BaseModelNotFound(LookupError):
    pass


def served_model_root(base_url: str, name: str, api_key: str = "EMPTY", client: httpx.Client | None = None,
                      timeout_s: float = 10.0) -> str | None:
    """`root` of the served base model named `name` (else of the only base model); None when the server
    does not list one (not vLLM, or unreachable)."""
    own = client is None
    client = client or httpx.Client(timeout=timeout_s)
    try:
        response = client.get(f"{base_url.rstrip('/')}/models", headers={"Authorization": f"Bearer {api_key}"})
        cards = response.json().get("data", []) if response.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    finally:
        if own:
            client.close()
    bases = [c for c in cards if isinstance(c, dict) and not c.get("parent") and c.get("root")]
    named = [c for c in bases if c.get("id") == name]
    chosen = named or (bases if len(bases) == 1 else [])
    return str(chosen[0]["root"]) if chosen else None


def weights_dir(ref: str) -> Path:
    """A local model directory for a directory path or a Hugging Face id; BaseModelNotFound otherwise."""
    path = Path(ref)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BaseModelNotFound(f"{ref} has no config.json (not a Hugging Face model directory)")
        return path
    if path.is_absolute() or not _HF_ID.match(ref):
        raise BaseModelNotFound(f"{ref} is not a directory here (mount it at the same path) nor a Hugging Face id")
    from huggingface_hub import snapshot_download

    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    try:  # the cached snapshot first: online, the Hub would hand out its newest revision instead
        return Path(snapshot_download(ref, allow_patterns=WEIGHT_FILES, local_files_only=True))
    except (OSError, ValueError) as exc:
        if offline:
            raise BaseModelNotFound(f"{ref} not found in the Hugging Face cache (HF_HUB_OFFLINE is on): "
                                    f"{_first_line(exc)}") from None
    try:
        return Path(snapshot_download(ref, allow_patterns=WEIGHT_FILES))
    except (OSError, ValueError) as exc:  # unknown / gated repo, no network
        raise BaseModelNotFound(f"{ref} not found on the Hugging Face Hub: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def resolve_base_model(base_url: str | None, name: str, api_key: str = "EMPTY",
                       client: httpx.Client | None = None) -> tuple[Path, str]:
    """(weights directory, where it came from) for the served model: the server's /v1/models, then $MODEL."""
    tried: list[str] = []
    candidates: list[tuple[str, str]] = []
    if base_url and (root := served_model_root(base_url, name, api_key, client)):
        candidates.append((root, f"served by {base_url}"))
    elif base_url:
        tried.append(f"{base_url}/models names no base model {name!r}")
    if model := os.environ.get("MODEL", "").strip():
        candidates.append((model, "from $MODEL"))
    else:
        tried.append("$MODEL is not set")
    for ref, how in candidates:
        try:
            return weights_dir(ref), f"{ref}, {how}"
        except BaseModelNotFound as exc:
            tried.append(str(exc))
    raise BaseModelNotFound("; ".join(tried))
