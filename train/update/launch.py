"""Run one update under `accelerate launch` (DDP / FSDP / DeepSpeed), or as its worker entry point.

    python -m deepresearch.train.update.launch --model DIR --samples round.parquet --out ADAPTER_DIR \
        [--init-adapter DIR | --resume CHECKPOINT] [--settings settings.json] [--state-out DIR] \
        [--stats-out stats.json] [--metadata metadata.json]

The driver (`deepresearch train`) writes the round's samples to Parquet (export.py) and calls
`launch_update`, which starts `accelerate launch --config_file train/update/accelerate/NAME.yaml -m
deepresearch.train.update.launch …` and reads the stats the main process writes back.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..choice.answer_choice import ChoiceExample, read_choice_examples, write_choice_examples
from ..config import TrainSettings
from .export import read_samples, write_samples
from .samples import TrainingSample
from .updater import GRPOUpdater, UpdateStats

SHIPPED_CONFIGS = ("ddp", "fsdp", "zero2", "zero3")


def accelerate_config_path(name_or_path: str) -> Path:
    """A shipped config by name (ddp, fsdp, zero2, zero3) or any accelerate yaml by path."""
    if name_or_path in SHIPPED_CONFIGS:
        return Path(str(resources.files("deepresearch.train.update") / "accelerate" / f"{name_or_path}.yaml"))
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(f"accelerate config not found: {name_or_path} (shipped: {', '.join(SHIPPED_CONFIGS)})")
    return path


@dataclass(frozen=True)
class Launcher:
    """How `accelerate launch` runs the update: its config (a shipped name or a yaml path) and processes."""

    config: str = "ddp"
    num_processes: int = 1
    main_process_port: int = 29511
    timeout_s: float | None = None


@dataclass(frozen=True)
class UpdateState:
    """Where the update starts from and where its trainer checkpoint goes."""

    init_adapter: Path | None = None  # continue training this adapter
    resume: Path | None = None  # trainer checkpoint to resume (adapter + optimiser)
    state_out: Path | None = None  # write a trainer checkpoint here after the update


def launch_update(
    model_path: Path, samples: list[TrainingSample], out: Path, settings: TrainSettings, launcher: Launcher,
    state: UpdateState = UpdateState(), metadata: dict | None = None, choice: Sequence[ChoiceExample] = (),
) -> UpdateStats:
    init_adapter, resume, state_out = state.init_adapter, state.resume, state.state_out
    with tempfile.TemporaryDirectory(prefix="drtrain-") as tmp:
        work = Path(tmp)
        write_samples(samples, work / "samples.parquet")
        write_choice_examples(choice, work / "choice.json")
        (work / "settings.json").write_text(settings.model_dump_json())
        (work / "metadata.json").write_text(json.dumps(metadata or {}, default=str))
        cmd = [
            sys.executable, "-m", "accelerate.commands.launch",
            "--config_file", str(accelerate_config_path(launcher.config)),
            "--num_processes", str(launcher.num_processes), "--main_process_port", str(launcher.main_process_port),
            "-m", "deepresearch.train.update.launch",
            "--model", str(model_path), "--samples", str(work / "samples.parquet"), "--out", str(out),
            "--settings", str(work / "settings.json"), "--metadata", str(work / "metadata.json"),
            "--stats-out", str(work / "stats.json"), "--choice", str(work / "choice.json"),
        ]
        if init_adapter is not None:
            cmd += ["--init-adapter", str(init_adapter)]
        if resume is not None:
            cmd += ["--resume", str(resume)]
        if state_out is not None:
            cmd += ["--state-out", str(state_out)]
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=launcher.timeout_s)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
            raise RuntimeError(f"accelerate launch failed (exit {proc.returncode}):\n" + "\n".join(tail))
        return UpdateStats.model_validate_json((work / "stats.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deepresearch.train.update.launch", description=__doc__)
    parser.add_argument("--model", type=Path, required=True, help="base model directory (safetensors)")
    parser.add_argument("--samples", type=Path, required=True, help="samples parquet (export.py layout)")
    parser.add_argument("--out", type=Path, required=True, help="where to save the trained adapter")
    parser.add_argument("--settings", type=Path, help="TrainSettings JSON")
    parser.add_argument("--init-adapter", type=Path, help="continue training this adapter")
    parser.add_argument("--resume", type=Path, help="trainer checkpoint to resume (adapter + optimiser)")
    parser.add_argument("--state-out", type=Path, help="write a trainer checkpoint here after the update")
    parser.add_argument("--stats-out", type=Path, help="write UpdateStats JSON here (main process)")
    parser.add_argument("--metadata", type=Path, help="extra metadata JSON stored with the adapter")
    parser.add_argument("--choice", type=Path, help="the round's answer-candidate sets (JSON, choice/answer_choice.py)")
    args = parser.parse_args(argv)

    settings = (TrainSettings.model_validate_json(args.settings.read_text()) if args.settings
                else TrainSettings())
    updater = GRPOUpdater(args.model, settings, init_adapter=args.init_adapter, resume_from=args.resume)
    stats = updater.train_round(read_samples(args.samples),
                                choice=read_choice_examples(args.choice) if args.choice else ())
    metadata = json.loads(args.metadata.read_text()) if args.metadata else {}
    updater.save_adapter(args.out, {**metadata, "update": stats.model_dump()})
    if args.state_out is not None:
        updater.save_state(args.state_out)
    if args.stats_out is not None and updater.acc.is_main_process:
        args.stats_out.write_text(stats.model_dump_json())
    updater.acc.end_training()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
