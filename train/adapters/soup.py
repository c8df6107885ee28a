"""Adapter arithmetic on peft LoRA files: average several adapters (a "soup"), cut one to a lower rank, scale one.
The starter adapter was made this way: three answer + bridge adapters trained on the same questions with other
seeds (`deepresearch train choices --train-seed N`), averaged, and cut to rank 32 in bf16.

`build_soup` writes one adapter whose weight change is exactly the (weighted) mean of the parts' changes: with
part i's ΔW_i = s · B_i A_i (s = alpha / r, the same for every part; ranks may differ) and weight w_i, the soup
stacks the parts' ranks, A = [A_1; …; A_N] and B = [w_1 B_1 … w_N B_N], with rank Σ r_i and alpha s · Σ r_i, so
s stays and ΔW = s · B A = Σ w_i s · B_i A_i. Averaging the A's and B's separately would not give that: each
part started from its own random A. The parts must answer for the same roles (metadata.json), as the soup does.

`compress` cuts an adapter back to rank k: for each module it keeps the k largest singular directions of
ΔW = s · B A (the best rank-k approximation in Frobenius norm), computed from QR factors of B and Aᵀ so ΔW
itself is never formed at full size. With dtype bf16 the factors are stored in bfloat16 (half the bytes; peft
and vLLM cast them to the model's dtype on load): rank 32 in bf16 takes the bytes of rank 16 in fp32.

`scale` copies an adapter with its weight change ΔW times a factor: only alpha changes, so s = alpha / r does,
and the factors and rank stay.

Each returns the line that says what it wrote; a bad input raises SoupError with one line to show.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .registry import METADATA_FILE

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"
DTYPES = ("fp32", "bf16")


class SoupError(ValueError):
    """An adapter that cannot be averaged, cut or scaled as asked (the message is one line for the user)."""


def plain_scaling(path: Path, config: dict) -> float:
    """s = alpha / r of a plain LoRA adapter, by the engine's own test (agent/model/embedded/loaders/lora_file.py);
    rsLoRA's alpha / √r would not survive a change of rank, so it is refused too."""
    from deepresearch.agent.model.embedded.loaders.lora_file import plain_lora_scaling

    if config.get("use_rslora") or plain_lora_scaling(config) is None:
        raise SoupError(f"{path} is not plain LoRA with one scaling alpha / r")
    return config["lora_alpha"] / config["r"]


def part_weights(specs: list[str]) -> list[tuple[Path, float]]:
    """"PATH" or "PATH:WEIGHT" → (path, weight); parts without a weight share what the weighted ones leave."""
    parts: list[tuple[Path, float | None]] = []
    for spec in specs:
        path, _, weight = spec.rpartition(":")
        try:
            parts.append((Path(path), float(weight)) if path else (Path(spec), None))
        except ValueError:  # a ':' of the path itself
            parts.append((Path(spec), None))
    given = sum(w for _, w in parts if w is not None)
    free = [p for p, w in parts if w is None]
    if given > 1 or (not free and abs(given - 1) > 1e-9) or any(w is not None and w <= 0 for _, w in parts):
        raise SoupError("part weights must be positive and sum to 1")
    return [(p, w if w is not None else (1 - given) / len(free)) for p, w in parts]


def _roles(path: Path) -> list[str] | None:
    return json.loads((path / METADATA_FILE).read_text()).get("roles")


def build_soup(out: Path, parts: list[tuple[Path, float]]) -> str:
    """The weighted mean of the parts' weight changes, as one adapter of rank Σ r_i in `out`."""
    import torch
    from safetensors.torch import load_file, save_file

    configs = [json.loads((p / CONFIG).read_text()) for p, _ in parts]
    scale = plain_scaling(parts[0][0], configs[0])
    for (p, _), c in zip(parts, configs, strict=True):
        if plain_scaling(p, c) != scale or sorted(c["target_modules"]) != sorted(configs[0]["target_modules"]):
            raise SoupError(f"{p} has another scaling alpha / r or other target modules than {parts[0][0]}")
    roles = _roles(parts[0][0])
    for p, _ in parts[1:]:
        if _roles(p) != roles:
            raise SoupError(f"{p} answers for other roles than {parts[0][0]}")
    weights = [load_file(str(p / WEIGHTS)) for p, _ in parts]
    soup = {}
    for key in weights[0]:
        tensors = [w[key].float() for w in weights]
        if ".lora_A." in key:
            soup[key] = torch.cat(tensors, dim=0).contiguous()  # [Σ r_i, in]
        elif ".lora_B." in key:
            soup[key] = torch.cat([t * wt for t, (_, wt) in zip(tensors, parts, strict=True)], dim=1).contiguous()
        else:
            raise SoupError(f"{key} is not a LoRA A or B weight")
    rank = sum(c["r"] for c in configs)
    out.mkdir(parents=True, exist_ok=True)
    save_file(soup, str(out / WEIGHTS))
    (out / CONFIG).write_text(json.dumps(configs[0] | {"r": rank, "lora_alpha": scale * rank}, indent=2))
    (out / METADATA_FILE).write_text(json.dumps(
        {"trainer": "soup", "parts": [f"{p}:{w:.4g}" for p, w in parts], "roles": roles}, indent=2))
    return f"{out}: {len(parts)} parts, rank {rank}, alpha {scale * rank}"


def compress(src: Path, out: Path, rank: int, dtype: str = "fp32") -> str:
    """`src` cut to rank `rank` in `out` (the best rank-k ΔW per module), stored in `dtype` (fp32 or bf16)."""
    import torch
    from safetensors.torch import load_file, save_file

    config = json.loads((src / CONFIG).read_text())
    scale = plain_scaling(src, config)
    if not 0 < rank < config["r"]:
        raise SoupError(f"--rank must be between 1 and {config['r'] - 1} (the adapter's rank is {config['r']})")
    if dtype not in DTYPES:
        raise SoupError(f"--dtype must be one of {', '.join(DTYPES)} (got {dtype!r})")
    store = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    weights = load_file(str(src / WEIGHTS))
    small, kept, total = {}, {}, {}
    for key_a in sorted(k for k in weights if ".lora_A." in k):
        key_b = key_a.replace(".lora_A.", ".lora_B.")
        a, b = weights[key_a].double(), weights[key_b].double()  # [R, in], [out, R]
        qb, rb = torch.linalg.qr(b)  # B = Qb Rb
        qa, ra = torch.linalg.qr(a.T)  # Aᵀ = Qa Ra
        u, sv, vh = torch.linalg.svd(scale * rb @ ra.T)  # ΔW = Qb (U S Vh) Qaᵀ
        root = sv[:rank].sqrt()
        # New rank-k factors with the same scaling s: ΔW_k = s · B' A'.
        small[key_b] = (qb @ u[:, :rank] * root / scale).to(store).contiguous()
        small[key_a] = (root[:, None] * (vh[:rank] @ qa.T)).to(store).contiguous()
        module = key_a.split(".lora_A.")[0].rsplit(".", 1)[-1]
        kept[module] = kept.get(module, 0.0) + float((sv[:rank] ** 2).sum())
        total[module] = total.get(module, 0.0) + float((sv ** 2).sum())
    out.mkdir(parents=True, exist_ok=True)
    save_file(small, str(out / WEIGHTS))
    (out / CONFIG).write_text(json.dumps(config | {"r": rank, "lora_alpha": scale * rank}, indent=2))
    meta = json.loads((src / METADATA_FILE).read_text()) if (src / METADATA_FILE).is_file() else {}
    (out / METADATA_FILE).write_text(json.dumps(
        {"trainer": "soup-compressed", "from": str(src), "rank": rank, "dtype": dtype, "roles": meta.get("roles")},
        indent=2))
    shares = ", ".join(f"{m} {kept[m] / total[m]:.3f}" for m in sorted(kept))
    return (f"{out}: rank {config['r']} → {rank}; share of ‖ΔW‖² kept: {shares}; "
            f"all {sum(kept.values()) / sum(total.values()):.3f}")


def scale(src: Path, out: Path, factor: float) -> str:
    """A copy of `src` in `out` whose weight change is ΔW × `factor` (alpha × factor; factors and rank stay)."""
    if not factor > 0:
        raise SoupError("--factor must be positive")
    config = json.loads((src / CONFIG).read_text())
    s = plain_scaling(src, config)
    roles = _roles(src)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / WEIGHTS, out / WEIGHTS)
    (out / CONFIG).write_text(json.dumps(config | {"lora_alpha": config["lora_alpha"] * factor}, indent=2))
    # fresh metadata, as `build_soup` writes: the source's origin and eval numbers are not this adapter's
    (out / METADATA_FILE).write_text(json.dumps(
        {"trainer": "scaled", "source": str(src), "factor": factor, "roles": roles}, indent=2))
    return f"{out}: ΔW × {factor:g} (alpha / r {s:g} → {s * factor:g})"
