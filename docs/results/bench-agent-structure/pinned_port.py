"""Control run: the snapshot's own bench/agent.py, unchanged, with the local web on a fixed port instead of a
free one picked at random, so the page URLs (and the untrusted-text fence tags, a digest of URL + text) in the
prompts are the same in both runs. Usage: python -P pinned_port.py PORT bench/agent.py ARGS..."""
import runpy
import sys

import deepresearch.evals.environment as env

port = int(sys.argv[1])
env.free_port = lambda: port
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
