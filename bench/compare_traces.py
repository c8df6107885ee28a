"""Compare the model calls of two benches' traces: the same prompts and the same completions, token for token.

    .venv/bin/python bench/compare_traces.py BEFORE_DATA_DIR AFTER_DATA_DIR [--also answer_scores ...]

A change meant to preserve behaviour (a refactor) is checked by running the same bench twice, once on the
code before and once after, each with its own fresh --data-dir and the same --port (bench/agent.py: the
local web's URLs are in the prompts), and comparing the two traces.db files here. Runs are paired in the
order they were made and must ask the same questions; in each, the `llm` events of each role and step are
compared in order (prompt token ids, completion token ids, completion text; calls that ran at once are
logged as they finished, so those may come in another order), then the final answers, and the whole
payload of each event kind given with --also (e.g. answer_scores, option_decision, citation_check). Prints
the counts compared and the first difference of each run; exits 1 when anything differs.

The embedded engine's arithmetic depends a little on what ran beside a call (a batch's products, reused
prompt caches), so two benches of the same code can differ in a completion of the same prompt. For traces
that must match token for token, run both benches with DEEPRESEARCH_MODEL__MAX_BATCH=1
DEEPRESEARCH_MODEL__PROMPT_CACHE_TOKENS=0 DEEPRESEARCH_MODEL__PREFIX_CACHE=false
DEEPRESEARCH_MODEL__REUSE_GREEDY=false (slower: one call at a time, nothing reused).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deepresearch.agent.trace.store import TraceStore

LLM_FIELDS = ("prompt_token_ids", "completion_token_ids", "text")


def traces_db(path: Path) -> Path:
    """A data dir's traces.db, or the file itself."""
    db = path / "traces.db" if path.is_dir() else path
    if not db.is_file():
        raise SystemExit(f"error: {path}: no traces.db there")
    return db


def llm_calls(store: TraceStore, run_id: str) -> list[dict[str, Any]]:
    return [e.payload for e in store.events(run_id, "llm")]


def call_key(call: dict[str, Any]) -> tuple:
    return tuple(tuple(v) if isinstance(v := call.get(f), list) else v for f in LLM_FIELDS)


def by_step(calls: list[dict[str, Any]]) -> dict[tuple[str, str], list[tuple]]:
    """The calls of each (role, step), in the order they were logged."""
    out: dict[tuple[str, str], list[tuple]] = {}
    for call in calls:
        out.setdefault((str(call.get("role")), str(call.get("step"))), []).append(call_key(call))
    return out


def compare_calls(calls_a: list[dict[str, Any]], calls_b: list[dict[str, Any]]) -> tuple[bool, list[str]]:
    """(in the same order, differences). The calls of one role and step are compared in order, but for those that
    ran at once (an executor's parallel reads), which are logged as they finish: the same calls in another order
    are no difference."""
    if [call_key(c) for c in calls_a] == [call_key(c) for c in calls_b]:
        return True, []
    steps_a, steps_b = by_step(calls_a), by_step(calls_b)
    diffs = [f"{len(calls_a)} llm calls before, {len(calls_b)} after"] if len(calls_a) != len(calls_b) else []
    for (role, step), keys_a in steps_a.items():
        keys_b = steps_b.get((role, step), [])
        if keys_a == keys_b or sorted(keys_a, key=repr) == sorted(keys_b, key=repr):
            continue
        missing = [(i, key) for i, key in enumerate(keys_a) if key not in keys_b]
        if not missing:  # every call made before is made after, some of them more often
            diffs.append(f"{role} calls of step {step}: {len(keys_a)} before, {len(keys_b)} after")
            continue
        i, key = missing[0]
        same_prompt = key[0] in {k[0] for k in keys_b}
        what = "the same prompt, another completion" if same_prompt else "a prompt not made after"
        diffs.append(f"{role} call {i + 1} of step {step}: {what}")
    diffs += [f"{role} calls of step {step}: none before" for role, step in steps_b.keys() - steps_a.keys()]
    return False, diffs


def compare_run(before: TraceStore, after: TraceStore, run_a: str, run_b: str, also: list[str],
                counts: dict[str, int]) -> list[str]:
    """The differences of one pair of runs (empty: the same), counting what was compared into `counts`."""
    calls_a = llm_calls(before, run_a)
    in_order, diffs = compare_calls(calls_a, llm_calls(after, run_b))
    counts["llm calls"] += len(calls_a)
    counts["prompt tokens"] += sum(len(c["prompt_token_ids"]) for c in calls_a)
    counts["completion tokens"] += sum(len(c["completion_token_ids"]) for c in calls_a)
    counts["runs with the calls in the same order"] += in_order
    for kind in also:
        payloads_a = [e.payload for e in before.events(run_a, kind)]
        payloads_b = [e.payload for e in after.events(run_b, kind)]
        counts[f"{kind} events"] += len(payloads_a)
        if sorted(payloads_a, key=repr) != sorted(payloads_b, key=repr):
            diffs.append(f"{kind} events differ")
    answer_a, answer_b = before.get_run(run_a).answer, after.get_run(run_b).answer
    counts["answers"] += 1
    if answer_a != answer_b:
        diffs.append(f"answer {answer_a!r} before, {answer_b!r} after")
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path, help="a data dir (or its traces.db) of the bench on the code before")
    ap.add_argument("after", type=Path, help="the same of the bench on the code after")
    ap.add_argument("--also", action="append", default=[], metavar="KIND",
                    help="also compare every event of this trace kind whole (repeatable)")
    args = ap.parse_args()
    before, after = TraceStore(traces_db(args.before)), TraceStore(traces_db(args.after))
    runs_a = list(reversed(before.list_runs(limit=None)))
    runs_b = list(reversed(after.list_runs(limit=None)))
    if [r.question for r in runs_a] != [r.question for r in runs_b]:
        raise SystemExit(f"error: the two traces ask different questions ({len(runs_a)} and {len(runs_b)} runs)")
    counts: dict[str, int] = {"runs": len(runs_a), "runs with the calls in the same order": 0, "llm calls": 0,
                              "prompt tokens": 0, "completion tokens": 0, "answers": 0}
    counts |= {f"{kind} events": 0 for kind in args.also}
    differing = 0
    for n, (a, b) in enumerate(zip(runs_a, runs_b, strict=True), 1):
        diffs = compare_run(before, after, a.id, b.id, args.also, counts)
        if diffs:
            differing += 1
            print(f"run {n} ({a.question[:60]!r}): " + "; ".join(diffs))
    print("compared: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"{differing} of {len(runs_a)} runs differ" if differing else "identical")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
