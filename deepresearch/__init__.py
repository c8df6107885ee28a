"""deepresearch: a deep-research agent that improves itself from its own use."""

import os
from importlib.metadata import PackageNotFoundError, version

# Read by OpenBLAS once, when numpy first loads it, so it is set here, before anything imports numpy. After each
# product OpenBLAS's idle threads spin for 2^28 cycles (~0.1 s) by default, holding the second core while the
# embedded engine's own helper threads (its GGUF kernel, its split attention) want it; 2^18 cycles (~0.1 ms) still
# bridges the gap between two products of one layer. dev/results/bench-split-attention/ has the measurements.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "18")

try:
    __version__ = version("deepresearch")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+local"
