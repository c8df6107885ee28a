"""What a trace store's model calls repeat (session 31, issue 14): the share of prompt tokens past the system
messages that a longest-common-prefix cache of a given token budget could skip, and the greedy calls equal
to an earlier one (same adapter, prompt and schema) with their summed model time.

    .venv/bin/python docs/results/bench-prompt-reuse/repeats.py DATA_DIR/traces.db

Calls are taken in the order they were logged (their end), an approximation of the order they were admitted.
A role's system message is taken as the shortest prefix its prompt shares with the role's other prompts.
"""

from __future__ import annotations

import collections
import json
import sqlite3
import sys


def common(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def main(path: str) -> None:
    db = sqlite3.connect(path)
    calls = [json.loads(p) for (p,) in db.execute("select payload from events where kind='llm' order by ts")]
    by_role = collections.defaultdict(list)
    for call in calls:
        by_role[call["role"]].append(call["prompt_token_ids"])
    system = {role: min((common(a, b) for a in ps for b in ps[:20] if a is not b), default=0)
              for role, ps in by_role.items()}
    rest = sum(len(c["prompt_token_ids"]) - system[c["role"]] for c in calls)
    print(f"{len(calls)} calls, {sum(len(c['prompt_token_ids']) for c in calls)} prompt tokens, "
          f"{rest} past the system messages")
    for budget in (2048, 4096, 8192, 16384, None):
        kept: collections.OrderedDict[int, list[int]] = collections.OrderedDict()
        held = saved = 0
        for k, call in enumerate(calls):
            ids = call["prompt_token_ids"]
            best, best_key = 0, None
            for key, other in kept.items():
                if (length := common(ids, other)) > best:
                    best, best_key = length, key
            saved += max(0, min(best, len(ids) - 1) - system[call["role"]])
            if best_key is not None:
                kept.move_to_end(best_key)
            kept[k], held = ids, held + len(ids)
            while budget is not None and held > budget:
                held -= len(kept.popitem(last=False)[1])
        print(f"  prompt cache of {budget or 'unlimited'} tokens: {saved} skipped ({saved / max(rest, 1):.1%})")
    seen, repeats, repeat_s, total_s = set(), 0, 0.0, 0.0
    for call in calls:
        seconds = call["timings"].get("prefill_s", 0.0) + call["timings"].get("decode_s", 0.0)
        total_s += seconds
        if call.get("temperature", 1.0) == 0.0:
            key = (call.get("adapter"), tuple(call["prompt_token_ids"]), json.dumps(call.get("schema"), sort_keys=True))
            if key in seen:
                repeats, repeat_s = repeats + 1, repeat_s + seconds
            seen.add(key)
    print(f"greedy calls equal to an earlier one: {repeats}, {repeat_s:.0f} of {total_s:.0f} summed model seconds")


if __name__ == "__main__":
    main(sys.argv[1])
