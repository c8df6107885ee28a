"""Average several LoRA adapters trained on the same questions with different seeds (a "soup"), and measure it
on the same held-out train questions as scripts/train_answer_choice.py.

    .venv/bin/python docs/results/adapter-soup/soup.py build --out SOUP A1 A2 A3   (A1:0.5 A2 A3: 1/2, 1/4, 1/4)
    .venv/bin/python docs/results/adapter-soup/soup.py compress --rank 32 --dtype bf16 --out SMALL SOUP
    .venv/bin/python docs/results/adapter-soup/soup.py measure SOUP [A1 …] [--bridges]
    .venv/bin/python docs/results/adapter-soup/soup.py scale --factor 1.5 --out SCALED ADAPTER

`build` writes one adapter whose weight change is exactly the (weighted) mean of the parts' changes: with part
i's ΔW_i = s · B_i A_i (s = alpha / r, the same for every part; ranks may differ) and weight w_i (PATH:W; 1/N
unless given), the soup stacks the parts' ranks, A = [A_1; …; A_N] and B = [w_1 B_1 … w_N B_N], with rank Σ r_i
and alpha s · Σ r_i, so s stays and ΔW = s · B A = Σ w_i s · B_i A_i. Averaging the A's and B's separately would
not give that: each part started from its own random A. The parts must answer for the same roles
(metadata.json), as the soup does.

`compress` cuts an adapter back to rank k: for each module it keeps the k largest singular directions of
ΔW = s · B A (the best rank-k approximation in Frobenius norm), computed from QR factors of B and Aᵀ so ΔW
itself is never formed at full size. It prints the share of ‖ΔW‖² kept, module type by module type. With
--dtype bf16 the factors are stored in bfloat16 (half the bytes; peft and vLLM cast them to the model's dtype
on load): rank 32 in bf16 takes the bytes of rank 16 in fp32.

`scale` writes a copy of an adapter whose weight change is ΔW times --factor: only alpha changes, so s = alpha / r
does, and the factors and rank stay (session 59, `../shipped-defaults/`).

`measure` loads each adapter on the base model and prints the held-out answer top-1 and the pick's summed F1
(of --held-out questions, --seed's order: the script's defaults) and, with --bridges, the held-out bridge top-1,
as the training script measures them after its pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts"))

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"


def plain_scaling(path: Path, config: dict) -> float:
    """s = alpha / r of a plain LoRA adapter, by the engine's own test (agent/model/embedded_lora_file.py);
    rsLoRA's alpha / √r would not survive a change of rank, so it is refused too."""
    from deepresearch.agent.model.embedded_lora_file import plain_lora_scaling

    if config.get("use_rslora") or plain_lora_scaling(config) is None:
        sys.exit(f"error: {path} is not plain LoRA with one scaling alpha / r")
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
        sys.exit("error: part weights must be positive and sum to 1")
    return [(p, w if w is not None else (1 - given) / len(free)) for p, w in parts]


def build(out: Path, parts: list[tuple[Path, float]]) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    configs = [json.loads((p / CONFIG).read_text()) for p, _ in parts]
    scale = plain_scaling(parts[0][0], configs[0])
    for (p, _), c in zip(parts, configs, strict=True):
        if plain_scaling(p, c) != scale or sorted(c["target_modules"]) != sorted(configs[0]["target_modules"]):
            sys.exit(f"error: {p} has another scaling alpha / r or other target modules than {parts[0][0]}")
    roles = json.loads((parts[0][0] / "metadata.json").read_text()).get("roles")
    for p, _ in parts[1:]:
        if json.loads((p / "metadata.json").read_text()).get("roles") != roles:
            sys.exit(f"error: {p} answers for other roles than {parts[0][0]}")
    weights = [load_file(str(p / WEIGHTS)) for p, _ in parts]
    soup = {}
    for key in weights[0]:
        tensors = [w[key].float() for w in weights]
        if ".lora_A." in key:
            soup[key] = torch.cat(tensors, dim=0).contiguous()  # [Σ r_i, in]
        elif ".lora_B." in key:
            soup[key] = torch.cat([t * wt for t, (_, wt) in zip(tensors, parts, strict=True)], dim=1).contiguous()
        else:
            sys.exit(f"error: {key} is not a LoRA A or B weight")
    rank = sum(c["r"] for c in configs)
    out.mkdir(parents=True, exist_ok=True)
    save_file(soup, str(out / WEIGHTS))
    (out / CONFIG).write_text(json.dumps(configs[0] | {"r": rank, "lora_alpha": scale * rank}, indent=2))
    (out / "metadata.json").write_text(json.dumps(
        {"trainer": "soup", "parts": [f"{p}:{w:.4g}" for p, w in parts], "roles": roles}, indent=2))
    print(f"{out}: {len(parts)} parts, rank {rank}, alpha {scale * rank}")


def compress(src: Path, out: Path, rank: int, dtype: str) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    config = json.loads((src / CONFIG).read_text())
    scale = plain_scaling(src, config)
    if not 0 < rank < config["r"]:
        sys.exit(f"error: --rank must be between 1 and {config['r'] - 1} (the adapter's rank is {config['r']})")
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
    meta = json.loads((src / "metadata.json").read_text()) if (src / "metadata.json").is_file() else {}
    (out / "metadata.json").write_text(json.dumps(
        {"trainer": "soup-compressed", "from": str(src), "rank": rank, "dtype": dtype, "roles": meta.get("roles")},
        indent=2))
    shares = ", ".join(f"{m} {kept[m] / total[m]:.3f}" for m in sorted(kept))
    print(f"{out}: rank {config['r']} → {rank}; share of ‖ΔW‖² kept: {shares}; "
          f"all {sum(kept.values()) / sum(total.values()):.3f}")


def scale(src: Path, out: Path, factor: float) -> None:
    config = json.loads((src / CONFIG).read_text())
    s = plain_scaling(src, config)
    roles = json.loads((src / "metadata.json").read_text()).get("roles")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / WEIGHTS, out / WEIGHTS)
    (out / CONFIG).write_text(json.dumps(config | {"lora_alpha": config["lora_alpha"] * factor}, indent=2))
    # fresh metadata, as `build` writes: the source's origin and eval numbers are not this adapter's
    (out / "metadata.json").write_text(json.dumps(
        {"trainer": "scaled", "source": str(src), "factor": factor, "roles": roles}, indent=2))
    print(f"{out}: ΔW × {factor:g} (alpha / r {s:g} → {s * factor:g})")


def measure(adapters: list[Path], held_out: int, limit: int, seed: int, bridges: bool) -> None:
    import train_answer_choice as T
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.config import LoraSettings
    from deepresearch.train.update import load_policy
    from transformers import PreTrainedTokenizerFast

    questions, corpus = T.POOL / "questions.jsonl", T.POOL / "corpus.jsonl"
    data = T.examples(questions, corpus, limit, load_settings().agent.answer_pool, seed, None, 0, held_out,
                      credit="f1")[:held_out]
    bridge_held = (T.bridge_sets(questions, corpus, limit, seed, None, {ex.question for ex in data})[0]
                   if bridges else [])
    model_dir = embedded_model_dir(load_settings().cache_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    for path in adapters:
        policy = load_policy(model_dir, LoraSettings(), path, seed)
        policy.eval()
        scorer = A.ChoiceScorer(policy, tokenizer, int(policy.config.pad_token_id or 0))
        answer = A.top1_hits(scorer, data)  # top1_hits scores without gradients
        answer_f1 = sum(A.top1_rewards(scorer, data))  # the pick's token F1 against the gold, summed
        bridge = A.top1_hits(scorer, bridge_held) if bridge_held else None
        line = f"{path}: answer top-1 {answer}/{len(data)} (F1 {answer_f1:.1f})"
        print(line + (f", bridge top-1 {bridge}/{len(bridge_held)}" if bridge_held else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("parts", nargs="+", metavar="PATH[:WEIGHT]")
    c = sub.add_parser("compress")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--rank", type=int, required=True)
    c.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    c.add_argument("adapter", type=Path)
    x = sub.add_parser("scale")
    x.add_argument("--out", type=Path, required=True)
    x.add_argument("--factor", type=float, required=True)
    x.add_argument("adapter", type=Path)
    m = sub.add_parser("measure")
    m.add_argument("adapters", type=Path, nargs="+")
    m.add_argument("--held-out", type=int, default=200)
    m.add_argument("--limit", type=int, default=1200)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--bridges", action="store_true")
    args = parser.parse_args()
    if args.command == "build":
        if len(args.parts) < 2:
            sys.exit("error: a soup needs at least two adapters")
        build(args.out, part_weights(args.parts))
    elif args.command == "scale":
        if not args.factor > 0:
            sys.exit("error: --factor must be positive")
        scale(args.adapter, args.out, args.factor)
    elif args.command == "compress":
        compress(args.adapter, args.out, args.rank, args.dtype)
    else:
        measure(args.adapters, args.held_out, args.limit, args.seed, args.bridges)


if __name__ == "__main__":
    main()
