"""Compare the bench runs of two trace stores: answers, status, verified cites, tokens; and the first LLM call
that differs (prompts compared with the local-web port masked, since each bench serves the corpus on a free port)."""
import json
import re
import sqlite3
import sys

PORT = re.compile(r"127\.0\.0\.1:\d+")
TAG = re.compile(r"UNTRUSTED [0-9a-f]{16}")


def runs(db):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = []
    for rid, q, status, answer, cites, usage in c.execute(
            "select id, question, status, answer, citations, usage from runs order by created_at"):
        cites = json.loads(cites)
        calls, tools = [], []
        for kind, p in c.execute("select kind, payload from events where run_id=? order by seq", (rid,)):
            d = json.loads(p)
            if kind == "llm":
                msgs = TAG.sub("UNTRUSTED TAG", PORT.sub("127.0.0.1:PORT", json.dumps(d["messages"])))
                calls.append({"role": d["role"], "step": d.get("step"), "text": PORT.sub("127.0.0.1:PORT", d["text"]),
                              "msgs": msgs, "ntok": len(d.get("completion_token_ids") or [])})
            elif kind == "tool":
                tools.append((d["tool"], PORT.sub("127.0.0.1:PORT", json.dumps(d["input"]))))
        out.append({"id": rid, "q": q, "status": status, "answer": answer,
                    "verified": sum(1 for x in cites if x.get("verified")),
                    "cited_docs": [x.get("doc_id") for x in cites],
                    "usage": json.loads(usage), "calls": calls, "tools": tools})
    return out


def key(call):
    return (call["role"], call["step"], call["msgs"])


a, b = runs(sys.argv[1]), runs(sys.argv[2])
same = 0
for i, (x, y) in enumerate(zip(a, b, strict=False), 1):
    assert x["q"] == y["q"], (x["q"], y["q"])
    eq = x["answer"] == y["answer"]
    same += eq
    traces_eq = [(c["role"], c["step"], c["msgs"], c["text"]) for c in x["calls"]] == \
                [(c["role"], c["step"], c["msgs"], c["text"]) for c in y["calls"]]
    # the same multiset of calls (order may differ between parallel executors)
    ms_eq = sorted((c["role"], c["step"] or "", c["msgs"], c["text"]) for c in x["calls"]) == \
            sorted((c["role"], c["step"] or "", c["msgs"], c["text"]) for c in y["calls"])
    tools_eq = sorted(x["tools"]) == sorted(y["tools"])
    print(f"{i:2d} {'SAME' if eq else 'DIFF'} status {x['status']}/{y['status']} "
          f"verified {x['verified']}/{y['verified']} "
          f"tok {x['usage'].get('llm_tokens')}/{y['usage'].get('llm_tokens')} "
          f"calls {len(x['calls'])}/{len(y['calls'])} "
          f"llm-calls identical(order)={traces_eq} (as a set)={ms_eq} tools-as-set-equal={tools_eq} "
          f"cited {x['cited_docs'] == y['cited_docs']}")
    print(f"     A: {x['answer']!r}\n     B: {y['answer']!r}")
    if not ms_eq:
        bx = {key(c): c for c in x["calls"]}
        by = {key(c): c for c in y["calls"]}
        for c in x["calls"]:
            k = key(c)
            if k in by and by[k]["text"] != c["text"]:
                print(f"     same prompt, different completion: {c['role']} {c['step']}\n"
                      f"       A {c['text'][:200]!r}\n       B {by[k]['text'][:200]!r}")
                break
        else:
            onlyx = [c for c in x["calls"] if key(c) not in by]
            onlyy = [c for c in y["calls"] if key(c) not in bx]
            print(f"     prompts only in A: {[(c['role'], c['step']) for c in onlyx]}; "
                  f"only in B: {[(c['role'], c['step']) for c in onlyy]}")
print(f"identical answers: {same}/{min(len(a), len(b))}")
