"""The 30 layers' matrix products of the 135M model (q/k/v, o, gate/up, down) at N rows: fp32 as the lean
forward computes them (OpenBLAS via numpy, column-major weights) against torch's int8 paths on this CPU.

    .venv/bin/python docs/results/bench-int8-products/products.py

Random weights of the model's shapes; best of 7, ms. Columns:
  fp32         numpy matmul on column-major Wᵀ (the lean forward today; 2–3 rows there use one GEMV per row)
  int8pack     torch._weight_int8pack_mm: weight-only int8, activations fp32
  fbgemm-dyn   torch.ops.quantized.linear_dynamic: int8 weights per channel, activations quantised per tensor
               inside the kernel (torch's quantized-tensor API, deprecated in this torch)
  w8a8-int-mm  torch._int_mm on int8 weights per channel, activations quantised per row in torch ops around it
  mkl-packed   torch.ops.mkl._mkl_linear on a weight packed once for MKL (fp32)
"""

import time
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore", message=".*deprecated.*")
torch.manual_seed(0)
torch.set_num_threads(2)
SHAPES = [(576, 960), (576, 576), (576, 3072), (1536, 576)]  # (in, out): q/k/v, o, gate/up, down
LAYERS = 30


def best_ms(fn, repeats: int = 7) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    weights = [[torch.randn(out, inp) * 0.02 for inp, out in SHAPES] for _ in range(LAYERS)]  # [out, in]
    column_major = [[w.t().contiguous().numpy() for w in layer] for layer in weights]
    pack8 = []
    fbgemm = []
    w8a8 = []
    for layer in weights:
        p8, fb, ww = [], [], []
        for w in layer:
            scale = w.abs().amax(1) / 127
            q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
            p8.append((q.contiguous(), scale))
            qw = torch.quantize_per_channel(w, scale.double(), torch.zeros(len(w), dtype=torch.long), 0, torch.qint8)
            fb.append(torch.ops.quantized.linear_prepack(qw, None))
            ww.append((q.t(), scale))  # [in, out], column-major
        pack8.append(p8)
        fbgemm.append(fb)
        w8a8.append(ww)
    print(f"{'rows':>5}{'fp32':>10}{'int8pack':>10}{'fbgemm-dyn':>12}{'w8a8-int-mm':>13}{'mkl-packed':>12}")
    for rows in (1, 2, 4, 8, 16, 64, 240, 400):
        xs = {inp: torch.randn(rows, inp) for inp, _ in SHAPES}
        xn = {inp: x.numpy() for inp, x in xs.items()}
        mkl = [[torch.ops.mkl._mkl_reorder_linear_weight(w, rows) for w in layer] for layer in weights]

        def fp32(xn=xn) -> None:
            for layer in column_major:
                for w in layer:
                    np.matmul(xn[w.shape[0]], w)

        def int8pack(xs=xs) -> None:
            for layer in pack8:
                for q, s in layer:
                    torch._weight_int8pack_mm(xs[q.shape[1]], q, s)

        def fbgemm_dyn(xs=xs) -> None:
            for layer, ws in zip(fbgemm, weights, strict=True):
                for packed, w in zip(layer, ws, strict=True):
                    torch.ops.quantized.linear_dynamic(xs[w.shape[1]], packed, False)

        def int_mm(xs=xs) -> None:
            for layer in w8a8:
                for q, s in layer:
                    x = xs[q.shape[0]]
                    sx = x.abs().amax(-1, keepdim=True) / 127
                    torch.mul(torch._int_mm(torch.round(x / sx).to(torch.int8), q), sx).mul_(s)

        def mkl_packed(xs=xs, mkl=mkl, rows=rows) -> None:
            for layer, packs in zip(weights, mkl, strict=True):
                for w, p in zip(layer, packs, strict=True):
                    torch.ops.mkl._mkl_linear(xs[w.shape[1]], p, w, None, rows)

        cells = [best_ms(f) for f in (fp32, int8pack, fbgemm_dyn, int_mm, mkl_packed)]
        print(f"{rows:>5}{cells[0]:>10.1f}{cells[1]:>10.1f}{cells[2]:>12.1f}{cells[3]:>13.1f}{cells[4]:>12.1f}")


if __name__ == "__main__":
    main()
