"""`deepresearch adapters soup|compress|scale` (train/adapters/soup.py): how the starter adapter was built from
three trained adapters. The soup and the scaled copy are the tensors the former dev/results/adapter-soup/soup.py
wrote (their digests were taken from it on these inputs); the cut is the best rank-k approximation."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from ..app.helpers import in_process_cli, one_line_failure

MODULES = {"q_proj": (8, 6), "down_proj": (6, 10)}  # projection: (out, in) features
LAYERS = 2
# sha256 of the soup's tensors (tensor_digest) as soup.py wrote them for the parts below, a:0.75 b (before it
# moved into the package)
SOUP_DIGEST = "d91b1d4ad143e82b6838de588a4c840b28ae7a01486ed805512da663f9a216b5"


def make_adapter(folder: Path, rank: int, seed: int, roles: list[str] | None = None, alpha_per_rank: float = 2.0
                 ) -> Path:
    """A plain peft LoRA adapter with `rank` and alpha = 2·rank, its factors drawn from `seed` (Python's own
    generator: the same numbers on every machine)."""
    rng = random.Random(seed)
    weights = {}
    for layer in range(LAYERS):
        for name, (out_f, in_f) in MODULES.items():
            kind = "self_attn" if name == "q_proj" else "mlp"
            key = f"base_model.model.model.layers.{layer}.{kind}.{name}"
            weights[f"{key}.lora_A.weight"] = torch.tensor(
                [[rng.uniform(-1, 1) for _ in range(in_f)] for _ in range(rank)], dtype=torch.float32)
            weights[f"{key}.lora_B.weight"] = torch.tensor(
                [[rng.uniform(-1, 1) for _ in range(rank)] for _ in range(out_f)], dtype=torch.float32)
    folder.mkdir(parents=True)
    save_file(weights, str(folder / "adapter_model.safetensors"))
    (folder / "adapter_config.json").write_text(json.dumps({
        "peft_type": "LORA", "task_type": "CAUSAL_LM", "r": rank, "lora_alpha": alpha_per_rank * rank,
        "target_modules": sorted(MODULES), "lora_dropout": 0.0, "bias": "none"}))
    (folder / "metadata.json").write_text(json.dumps({"trainer": "test", "roles": roles or ["answer", "bridge"]}))
    return folder


def tensor_digest(folder: Path) -> str:
    weights = load_file(str(folder / "adapter_model.safetensors"))
    digest = hashlib.sha256()
    for key in sorted(weights):
        digest.update(key.encode() + str(weights[key].dtype).encode() + weights[key].contiguous().numpy().tobytes())
    return digest.hexdigest()


def delta(folder: Path) -> dict[str, torch.Tensor]:
    """ΔW = alpha / r · B A of every module."""
    config = json.loads((folder / "adapter_config.json").read_text())
    weights = {k: v.double() for k, v in load_file(str(folder / "adapter_model.safetensors")).items()}
    s = config["lora_alpha"] / config["r"]
    return {k.replace(".lora_A.weight", ""): s * weights[k.replace(".lora_A.", ".lora_B.")] @ weights[k]
            for k in weights if ".lora_A." in k}


@pytest.fixture
def parts(tmp_path: Path) -> tuple[Path, Path]:
    return make_adapter(tmp_path / "a", rank=4, seed=1), make_adapter(tmp_path / "b", rank=2, seed=2)


@pytest.fixture
def adapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`deepresearch adapters …` in-process, with a fresh data directory."""
    run = in_process_cli(tmp_path, monkeypatch)
    return lambda *args: run("adapters", *args)


def test_the_soup_is_the_weighted_mean_of_the_parts_changes(adapters, parts, tmp_path):
    a, b = parts
    done = adapters("soup", "--out", tmp_path / "soup", f"{a}:0.75", b)
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == f"{tmp_path / 'soup'}: 2 parts, rank 6, alpha 12.0"
    soup = tmp_path / "soup"
    assert tensor_digest(soup) == SOUP_DIGEST
    # ranks stacked: A = [A_a; A_b], B = [0.75 B_a, 0.25 B_b]; so ΔW = 0.75 ΔW_a + 0.25 ΔW_b exactly (s stays 2)
    wa, wb, ws = (load_file(str(p / "adapter_model.safetensors")) for p in (a, b, soup))
    for key in ws:
        if ".lora_A." in key:
            assert torch.equal(ws[key], torch.cat([wa[key], wb[key]]))
        else:
            assert torch.equal(ws[key], torch.cat([wa[key] * 0.75, wb[key] * 0.25], dim=1))
    da, db, dsoup = delta(a), delta(b), delta(soup)
    for key, change in dsoup.items():
        torch.testing.assert_close(change, 0.75 * da[key] + 0.25 * db[key])
    config = json.loads((soup / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"]) == (6, 12.0)
    assert json.loads((soup / "metadata.json").read_text()) == {
        "trainer": "soup", "parts": [f"{a}:0.75", f"{b}:0.25"], "roles": ["answer", "bridge"]}


def test_compress_keeps_the_best_rank_k_change_in_bf16(adapters, parts, tmp_path):
    soup, small = tmp_path / "soup", tmp_path / "small"
    assert adapters("soup", "--out", soup, *parts).exit_code == 0
    done = adapters("compress", "--rank", 3, "--dtype", "bf16", "--out", small, soup)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"{small}: rank 6 → 3; share of ‖ΔW‖² kept: down_proj ")
    config = json.loads((small / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"]) == (3, 6.0)  # s = alpha / r stays 2
    assert {t.dtype for t in load_file(str(small / "adapter_model.safetensors")).values()} == {torch.bfloat16}
    for key, change in delta(small).items():
        u, sv, vh = torch.linalg.svd(delta(soup)[key])
        best = u[:, :3] @ torch.diag(sv[:3]) @ vh[:3]
        torch.testing.assert_close(change, best, rtol=0.02, atol=0.05)  # bf16 factors: ~3 significant digits
    meta = json.loads((small / "metadata.json").read_text())
    assert meta == {"trainer": "soup-compressed", "from": str(soup), "rank": 3, "dtype": "bf16",
                    "roles": ["answer", "bridge"]}


def test_scale_changes_alpha_only(adapters, parts, tmp_path):
    soup, scaled = tmp_path / "soup", tmp_path / "scaled"
    assert adapters("soup", "--out", soup, f"{parts[0]}:0.75", parts[1]).exit_code == 0
    done = adapters("scale", "--factor", 1.5, "--out", scaled, soup)
    assert done.exit_code == 0 and done.stdout.strip() == f"{scaled}: ΔW × 1.5 (alpha / r 2 → 3)"
    assert tensor_digest(scaled) == SOUP_DIGEST  # the factors are copied as they are
    assert json.loads((scaled / "adapter_config.json").read_text())["lora_alpha"] == 18.0
    assert json.loads((scaled / "metadata.json").read_text()) == {
        "trainer": "scaled", "source": str(soup), "factor": 1.5, "roles": ["answer", "bridge"]}


def test_bad_inputs_are_one_line_and_write_nothing(adapters, parts, tmp_path):
    a, b = parts
    out = tmp_path / "out"
    one_line_failure(adapters("soup", "--out", out, a), "a soup needs at least two adapters")
    one_line_failure(adapters("soup", "--out", out, f"{a}:0.7", f"{b}:0.7"),
                     "part weights must be positive and sum to 1")
    one_line_failure(adapters("soup", "--out", out, a, tmp_path / "nope"),
                     f"{tmp_path / 'nope'}: no such adapter folder")
    other = make_adapter(tmp_path / "other", rank=2, seed=3, roles=["answer"])
    one_line_failure(adapters("soup", "--out", out, a, other), f"{other} answers for other roles than {a}")
    steep = make_adapter(tmp_path / "steep", rank=2, seed=3, alpha_per_rank=4.0)
    one_line_failure(adapters("soup", "--out", out, a, steep),
                   f"{steep} has another scaling alpha / r or other target modules than {a}")
    one_line_failure(adapters("compress", "--rank", 4, "--out", out, a),
                   "--rank must be between 1 and 3 (the adapter's rank is 4)")
    one_line_failure(adapters("compress", "--rank", 2, "--dtype", "fp8", "--out", out, a),
                   "--dtype must be one of fp32, bf16 (got 'fp8')")
    one_line_failure(adapters("scale", "--factor", 0, "--out", out, a), "--factor must be positive")
    assert not out.exists()
