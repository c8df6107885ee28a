#!/bin/bash
# /tmp/snap_{old,new}: `git archive` of each commit, with pkg/deepresearch linking its packages (see README.md).
cd /work/main
for i in 1 2 3 4 5; do
  for n in old new; do
    echo "=== $n run $i $(date +%T)"
    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 PYTHONPATH=/tmp/snap_$n/pkg .venv/bin/python -P /tmp/snap_$n/src/bench/model.py --workload agent --engines verified --skip-vllm 2>&1 | grep -E "engine verified|wall s|effective|parse|verified@1 by|  (planner|extractor|executor|writer)"
  done
done
