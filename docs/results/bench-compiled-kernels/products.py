"""The 30 layers' matrix products of the 135M model (q/k/v, o, gate/up, down) at N rows: as the lean forward
computes them (`matmul_t`: OpenBLAS via numpy on column-major weights, one GEMV per row at 2-3 rows) against
torch.compile (inductor) of the same products, weights frozen into the compiled graph.

    .venv/bin/python docs/results/bench-compiled-kernels/products.py

Random weights of the model's shapes; best of 7, ms; compile s = the first call of a fresh compile (inductor's
on-disk cache emptied first). Columns:
  lean        the engine's products today (deepresearch.agent.model.embedded_products.matmul_t)
  inductor    torch.compile(dynamic=False) with inductor's `freezing`: weights become constants, packed once
              for MKL's GEMM (its CPU path for a frozen fp32 linear of a fixed batch size)
  cpp-gemm    the same with max_autotune and only the "CPP" GEMM backend: inductor generates and tunes its own
              AVX-512 micro-kernels for these shapes (the kernel that could stream a weight once for a few rows)
"""

import os
import shutil
import tempfile
import time
import timeit

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-bench-")

import torch  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
from deepresearch.agent.model.embedded_products import matmul_t  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(2)
SHAPES = [(576, 960), (576, 576), (576, 3072), (1536, 576)]  # (in, out): q/k/v, o, gate/up, down
LAYERS = 30


class Products(torch.nn.Module):
    """Every layer's four products on inputs of their size (no data flow between them, as in the other benches)."""

    def __init__(self, weights: list[list[torch.Tensor]]) -> None:
        super().__init__()
        self.weights = torch.nn.ParameterList(
            torch.nn.Parameter(w, requires_grad=False) for layer in weights for w in layer)

    def forward(self, xs: dict[int, torch.Tensor]) -> list[torch.Tensor]:
        return [torch.nn.functional.linear(xs[w.shape[1]], w) for w in self.weights]


def best_ms(fn, repeats: int = 7) -> float:
    fn()
    return min(timeit.repeat(fn, number=1, repeat=repeats)) * 1000


def compiled(module: torch.nn.Module, xs: dict[int, torch.Tensor], cpp_gemm: bool):
    torch._dynamo.reset()
    shutil.rmtree(os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
    inductor_config.freezing = True
    inductor_config.max_autotune = cpp_gemm
    inductor_config.max_autotune_gemm_backends = "CPP" if cpp_gemm else "ATEN,TRITON,CPP"
    fn = torch.compile(module, dynamic=False)
    started = time.perf_counter()
    fn(xs)
    return fn, time.perf_counter() - started


def main() -> None:
    weights = [[torch.randn(out, inp) * 0.02 for inp, out in SHAPES] for _ in range(LAYERS)]  # [out, in]
    column_major = [[w.t().contiguous().t() for w in layer] for layer in weights]  # as JointProduct lays them out
    module = Products(weights).eval()
    print(f"{'rows':>5}{'lean':>9}{'inductor':>10}{'compile s':>11}{'cpp-gemm':>10}{'compile s':>11}{'max diff':>10}")
    with torch.no_grad():
        for rows in (1, 2, 4, 8, 240):
            xs = {inp: torch.randn(rows, inp) for inp, _ in SHAPES}

            def lean(xs=xs) -> None:
                for layer in column_major:
                    for w in layer:
                        matmul_t(xs[w.shape[1]], w)

            default, default_s = compiled(module, xs, cpp_gemm=False)
            default_ms = best_ms(lambda fn=default, xs=xs: fn(xs))
            cpp, cpp_s = compiled(module, xs, cpp_gemm=True)
            cpp_ms = best_ms(lambda fn=cpp, xs=xs: fn(xs))
            reference = [matmul_t(xs[w.shape[1]], w) for layer in column_major for w in layer]
            diff = max((a - b).abs().max().item() for a, b in zip(cpp(xs), reference, strict=True))
            print(f"{rows:>5}{best_ms(lean):>9.1f}{default_ms:>10.1f}{default_s:>11.1f}{cpp_ms:>10.1f}{cpp_s:>11.1f}"
                  f"{diff:>10.1e}", flush=True)
    shutil.rmtree(os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)


if __name__ == "__main__":
    main()
