#!/bin/bash
# README question, old (HEAD) vs new (working tree), interleaved; each its own fresh data dir, run 1 warms it.
Q="In what year did the playwright who wrote The City Heiress die?"
for n in old new; do rm -rf /tmp/readme-data-$n; mkdir -p /tmp/readme-data-$n; done
for i in 1 2 3 4 5; do
  for n in old new; do
    s=$(date +%s.%N)
    out=$(cd /tmp && OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 DEEPRESEARCH_DATA_DIR=/tmp/readme-data-$n PYTHONPATH=/tmp/snap_$n/pkg /work/main/.venv/bin/python -P -c "from deepresearch.app.cli import main; main()" ask --offline --auto-approve "$Q" 2>/dev/null)
    e=$(date +%s.%N)
    echo "$n run $i wall $(echo "$e - $s" | bc) s; answer: $(echo "$out" | grep -m1 -i "answer")"
  done
done
