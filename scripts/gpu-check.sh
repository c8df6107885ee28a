#!/usr/bin/env bash
# The GPU box acceptance check: build the image, start vLLM, ask one question, run one training round
# (the README's compose command: rollouts → GRPO update on the GPU → eval gate → publish → hot-load),
# then ask again and check the answer came from the new adapter. One line per check, ✔/✘ with its time;
# full logs in $LOGS. Exit code: the number of failed checks (0 = the box works).
#
#   cp .env.example .env && $EDITOR .env      # MODEL, MODEL_NAME, the GPU split
#   bash scripts/gpu-check.sh
#
# Environment: QUESTION (asked twice), ASK_FLAGS (default --offline: the bundled demo index, so the
# check needs no web search), LOGS (log folder), KEEP_UP=1 (leave the model server running after).
# The checks are functions run through check(): shellcheck cannot see those calls (SC2317).
# shellcheck disable=SC2317
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

QUESTION=${QUESTION:-"In what year did the playwright who wrote The City Heiress die?"}
ASK_FLAGS=${ASK_FLAGS:---offline}
LOGS=${LOGS:-out/gpu-check-$(date +%Y%m%d-%H%M%S)}
KEEP_UP=${KEEP_UP:-0}
mkdir -p "$LOGS"
failed=0
adapter=""

compose() { docker compose "$@"; }

# check ID LABEL COMMAND…: run it with output in $LOGS/ID.log; print ✔/✘, LABEL, the seconds and, on
# failure, the last line of the log. Returns the command's status.
check() {
  local id=$1 label=$2 start=$EPOCHREALTIME status mark seconds
  shift 2
  "$@" >"$LOGS/$id.log" 2>&1
  status=$?
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
  if [ "$status" -eq 0 ]; then mark="✔"; else mark="✘"; failed=$((failed + 1)); fi
  printf '%s %-34s %6s s' "$mark" "$label" "$seconds"
  if [ "$status" -ne 0 ]; then
    printf '   %s' "$(grep -v '^[[:space:]]*$' "$LOGS/$id.log" | tail -n 1 | cut -c1-160)"
  fi
  printf '\n'
  return "$status"
}

finish() {
  if [ "$KEEP_UP" != "1" ]; then compose stop model >"$LOGS/stop.log" 2>&1; fi
  echo "$failed check(s) failed · logs: $LOGS"
  exit "$failed"
}

app_python() { compose run --rm -T --entrypoint python app -c "$1"; }

gpu_visible() { nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader; }

app_sees_gpu() {
  app_python "import torch
assert torch.cuda.is_available(), 'torch sees no CUDA device in the app container'
print(torch.cuda.get_device_name(0), 'bf16' if torch.cuda.is_bf16_supported() else 'no bf16')"
}

sandbox_works() {
  app_python "from deepresearch.tools.config import SandboxSettings
from deepresearch.tools.sandbox.tool import PythonTool
reason = PythonTool(SandboxSettings()).unavailable_reason()
print(reason or 'the python sandbox starts (bwrap with --proc, as nobody)')
raise SystemExit(reason is not None)"
}

served_weights_found() {
  app_python "import os
from deepresearch.train.base_model import resolve_base_model
print(*resolve_base_model('http://model:8000/v1', os.environ['DEEPRESEARCH_MODEL__NAME']), sep='  ·  ')"
}

# ask_once OUT.json: one question; the JSON result in OUT. Finished (0) or stopped by a budget (3) both
# answer; anything else fails.
ask_once() {
  local status
  # shellcheck disable=SC2086  # ASK_FLAGS holds several flags
  compose run --rm -T app ask $ASK_FLAGS --auto-approve --json "$QUESTION" >"$1"
  status=$?
  cat "$1"
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || return "$status"
  grep -q '"run_id"' "$1"
}

# The README's command (-T: no terminal; wide COLUMNS: one line per round in the log).
train_one_round() { compose run --rm -T -e COLUMNS=400 app train --from-runs --rounds 1; }

# "NAME published" or "NAME kept": the adapter the round trained and whether the gate published it.
newest_adapter() {
  app_python "from deepresearch.app.settings import get_settings
from deepresearch.train.adapters.registry import AdapterRegistry
registry = AdapterRegistry(get_settings().paths.adapters)
names = registry.names()
print(names[-1] if names else '-', 'published' if names and registry.current == names[-1] else 'kept')"
}

# If the gate kept the adapter back (it may after one small round), publish it by hand so hot-loading is
# still checked; the gate's verdict is in the log line.
publish_adapter() {
  local state
  state=$(newest_adapter | tail -n 1)
  adapter=${state%% *}
  if [ -z "$adapter" ] || [ "$adapter" = "-" ]; then
    echo "the round produced no adapter (see train.log)"
    return 1
  fi
  grep -ohE 'eval gate [^·]*' "$LOGS/train.log" | tail -n 1
  if [ "${state#* }" = "published" ]; then
    echo "published by the gate: $adapter"
  else
    echo "the gate did not publish $adapter; publishing it with 'adapters use' to check hot-loading"
    compose run --rm -T app adapters use "$adapter"
  fi
}

server_lists_adapter() {
  curl -fsS http://127.0.0.1:8000/v1/models | tee /dev/stderr | grep -q "\"$adapter\""
}

answered_by_adapter() {
  ask_once "$LOGS/ask-after.json" || return 1
  grep -q "\"adapter\": \"$adapter\"" "$LOGS/ask-after.json" || { echo "the answer did not come from $adapter"; return 1; }
}

echo "gpu-check: MODEL=$(grep -E '^MODEL=' .env 2>/dev/null | cut -d= -f2- || true) (from .env; empty = the default)"
check gpu "gpu visible (nvidia-smi)" gpu_visible || finish
check build "build image" compose build || finish
check model "model server healthy" compose up -d --wait model || finish
check app-gpu "app container sees the GPU" app_sees_gpu
check sandbox "python sandbox in the container" sandbox_works
check weights "trainer finds the served weights" served_weights_found
check ask-before "ask (base model)" ask_once "$LOGS/ask-before.json" || finish
check train "train --from-runs --rounds 1" train_one_round || finish
check publish "publish the adapter" publish_adapter || finish
check hot-load "vLLM hot-loaded the adapter" server_lists_adapter
check ask-after "ask again (new adapter)" answered_by_adapter
grep -h -E '^round [0-9]+:' "$LOGS/train.log" | sed 's/^/  /'
finish
