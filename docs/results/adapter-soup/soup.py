"""Average several LoRA adapters trained on the same questions with different seeds (a "soup"), and measure it
on the same held-out train questions as scripts/train_answer_choice.py.

    .venv/bin/python docs/results/adapter-soup/soup.py build --out SOUP A1 A2 A3
    .venv/bin/python docs/results/adapter-soup/soup.py measure SOUP [A1 …] [--bridges]

`build` writes one adapter whose weight change is exactly the mean of the parts' changes: with part i's
ΔW_i = s · B_i A_i (s = alpha / r, the same for every part), the soup stacks the parts' ranks,
A = [A_1; …; A_N] and B = [B_1 … B_N] / N, with rank N·r and alpha N·alpha, so s stays and
ΔW = s · B A = (1/N) Σ s · B_i A_i. Averaging the A's and B's separately would not give that: each part
started from its own random A. The parts must answer for the same roles (metadata.json), as the soup does.

`measure` loads each adapter on the base model and prints the held-out answer top-1 (of --held-out questions,
--seed's order: the script's defaults) and, with --bridges, the held-out bridge top-1, as the training script
measures them after its pass.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts"))

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"


def build(out: Path, parts: list[Path]) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    configs = [json.loads((p / CONFIG).read_text()) for p in parts]
    r, alpha = configs[0]["r"], configs[0]["lora_alpha"]
    for p, c in zip(parts, configs, strict=True):
        if (c["r"], c["lora_alpha"], sorted(c["target_modules"])) != (r, alpha, sorted(configs[0]["target_modules"])):
            sys.exit(f"error: {p} has another rank, alpha or target modules than {parts[0]}")
        if c.get("use_rslora") or c.get("use_dora") or c.get("rank_pattern") or c.get("alpha_pattern"):
            sys.exit(f"error: {p} is not plain LoRA with one scaling alpha / r")
    roles = json.loads((parts[0] / "metadata.json").read_text()).get("roles")
    for p in parts[1:]:
        if json.loads((p / "metadata.json").read_text()).get("roles") != roles:
            sys.exit(f"error: {p} answers for other roles than {parts[0]}")
    weights = [load_file(str(p / WEIGHTS)) for p in parts]
    n = len(parts)
    soup = {}
    for key in weights[0]:
        tensors = [w[key] for w in weights]
        if ".lora_A." in key:
            soup[key] = torch.cat(tensors, dim=0).contiguous()  # [N·r, in]
        elif ".lora_B." in key:
            soup[key] = (torch.cat(tensors, dim=1) / n).contiguous()  # [out, N·r]
        else:
            sys.exit(f"error: {key} is not a LoRA A or B weight")
    out.mkdir(parents=True, exist_ok=True)
    save_file(soup, str(out / WEIGHTS))
    (out / CONFIG).write_text(json.dumps(configs[0] | {"r": n * r, "lora_alpha": n * alpha}, indent=2))
    (out / "metadata.json").write_text(json.dumps(
        {"trainer": "soup", "parts": [str(p) for p in parts], "roles": roles}, indent=2))
    print(f"{out}: {n} parts of rank {r}, rank {n * r}, alpha {n * alpha}")


def measure(adapters: list[Path], held_out: int, limit: int, seed: int, bridges: bool) -> None:
    import train_answer_choice as T
    from deepresearch.agent.graph.writer import RERANK_POOL
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.config import LoraSettings
    from deepresearch.train.update import load_policy
    from transformers import PreTrainedTokenizerFast

    questions, corpus = T.POOL / "questions.jsonl", T.POOL / "corpus.jsonl"
    data = T.examples(questions, corpus, limit, RERANK_POOL, seed, None, 0, held_out)[:held_out]
    bridge_held = (T.bridge_sets(questions, corpus, limit, seed, None, {ex.question for ex in data})[0]
                   if bridges else [])
    model_dir = embedded_model_dir(load_settings().cache_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    for path in adapters:
        policy = load_policy(model_dir, LoraSettings(), path, seed)
        policy.eval()
        scorer = A.ChoiceScorer(policy, tokenizer, int(policy.config.pad_token_id or 0))
        answer = A.top1_hits(scorer, data)  # top1_hits scores without gradients
        bridge = A.top1_hits(scorer, bridge_held) if bridge_held else None
        line = f"{path}: answer top-1 {answer}/{len(data)}"
        print(line + (f", bridge top-1 {bridge}/{len(bridge_held)}" if bridge_held else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("parts", type=Path, nargs="+")
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
        build(args.out, args.parts)
    else:
        measure(args.adapters, args.held_out, args.limit, args.seed, args.bridges)


if __name__ == "__main__":
    main()
