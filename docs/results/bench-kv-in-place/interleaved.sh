#!/bin/bash
# The 41-call agent workload from each snapshot in turn, $1 rounds (default 3).
# /tmp/snap_NAME/src: `git archive` of a commit; /tmp/snap_NAME/pkg/deepresearch: its deepresearch/ folder with
# app, agent, tools, train, evals linked in, so `PYTHONPATH=/tmp/snap_NAME/pkg python -P` imports that snapshot.
# Usage: interleaved.sh ROUNDS NAME...
cd /work/main || exit 1
rounds=${1:-3}; shift
for i in $(seq "$rounds"); do
  for n in "$@"; do
    echo "=== $n run $i $(date +%T)"
    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 PYTHONPATH=/tmp/snap_$n/pkg .venv/bin/python -P /tmp/snap_$n/src/bench/model.py \
      --workload agent --engines verified --skip-vllm 2>&1 | grep -E "engine verified|wall s|emitted|effective|parse"
  done
done
