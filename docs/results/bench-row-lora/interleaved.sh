#!/bin/bash
# Interleaved A/B: the engine before (2fd639e: mixed-adapter steps through peft + transformers' forward) and
# after (RowLora in the lean forward), the same bench files, the demo's trained planner adapter.
cd /tmp
for i in 1 2; do
  for v in base rowlora; do
    S=/tmp/snap_$v
    echo "=== run $i: $v ($(date +%T))"
    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 PYTHONPATH=$S/pkg /work/main/.venv/bin/python $S/src/bench/model.py \
      --workload agent --engines verified --skip-vllm --adapter /tmp/ld-pool/data/adapters/grpo-0006 \
      --adapter-roles planner,extractor 2>&1 | grep -v "Loading weights\|warn"
  done
done
