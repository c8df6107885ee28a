"""One-row products (decode at batch 1) in bf16 through torch against fp32 through OpenBLAS (numpy), ms per call,
the same weight each call (session 37, Zen 4).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-session37-zen4/gemv.py
"""
import time, torch, numpy as np
torch.set_num_threads(2)
def t(f, n=200):
    for _ in range(10): f()
    s=time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter()-s)/n*1e3
for (i,o) in [(576,1536),(576,3072),(1536,576),(576,49152)]:
    W = torch.randn(o,i); x = torch.randn(1,i)
    Wb = W.to(torch.bfloat16); xb = x.to(torch.bfloat16)
    Wt = W.t().contiguous(); Wbt = Wb.t().contiguous()
    Wn = np.ascontiguousarray(W.numpy().T); xn = x.numpy()
    r = {
     "fp32 linear": t(lambda: torch.nn.functional.linear(x, W)),
     "np fp32 x@Wt": t(lambda: xn @ Wn),
     "bf16 linear": t(lambda: torch.nn.functional.linear(xb, Wb)),
     "bf16 mv W@x": t(lambda: torch.mv(Wb, xb[0])),
     "bf16 x@Wbt": t(lambda: xb @ Wbt),
     "bf16 mm Wb@xT": t(lambda: Wb @ xb.t()),
    }
    print(i,o, {k: round(v,3) for k,v in r.items()})
