"""Every `train`, `eval` and `adapters` command of the README runs as pasted, with tiny limits appended.

A user's clone has no ../shared beside it: the commands run in an empty directory with the bundled
`demo` set (and, for "your own QA set", a qa.jsonl/corpus.jsonl written there from it). The model is a
tiny random Llama with the real tokenizer (tests/train/tiny_model.py), so every code path runs — graph,
grammar, trace, GRPO update, eval gate, publish — in seconds; what it answers is noise. Tiny limits are
options appended after the pasted ones (the last occurrence wins): one question per round, groups of 2,
2 dev questions per gate, 2 eval questions, at most 2 rounds (3 for `--resume`, so it has a round to do).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
from deepresearch.evals.data.dataset import bundled_dataset

from ..model.conftest import model_cache_dir
from ..train.tiny_model import save_tiny_chat_model
from .helpers import clean_env

README = Path(__file__).resolve().parents[2] / "README.md"
COMMANDS = ("deepresearch train", "deepresearch eval", "deepresearch adapters")


def readme_commands() -> list[str]:
    """The README's `train`/`eval`/`adapters` lines of its bash blocks, in order, comments dropped."""
    found, in_bash = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_bash = line.strip() == "```bash"
            continue
        if in_bash and line.startswith(COMMANDS):
            found.append(re.sub(r"\s+#\s.*$", "", line).strip())
    return found


def tiny(command: str) -> list[str]:
    args = command.split()[1:]
    if args[0] == "train":
        rounds = re.search(r"--rounds (\d+)", command)
        limit = min(int(rounds.group(1)), 2) if rounds else 1
        args += ["--questions-per-round", "1", "--group-size", "2", "--dev-size", "2",
                 "--rounds", str(limit + ("--resume" in args))]
    elif args[:1] == ["eval"] and "compare" not in args:
        args += ["--limit", "2"]
    return args


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deepresearch", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_the_readme_lists_what_this_test_runs():
    commands = readme_commands()
    assert sum(c.startswith("deepresearch train") for c in commands) >= 7, commands
    assert any("--watch" in c for c in commands) and any("--resume" in c for c in commands)
    assert not [c for c in commands if "|" in c], "a pasted line must be one command"


def test_every_readme_train_and_eval_command_runs_as_pasted(tmp_path: Path):
    cache, cwd = tmp_path / "cache", tmp_path / "clone"
    cwd.mkdir()
    save_tiny_chat_model(cache, embedded_model_dir(model_cache_dir()))
    env = clean_env(tmp_path, DEEPRESEARCH_CACHE_DIR=str(cache), DEEPRESEARCH_MODEL__MAX_TOKENS="48",
                    DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1", DEEPRESEARCH_TRAIN__WATCH_POLL_S="1",
                    DEEPRESEARCH_TRAIN__WATCH_MIN_NEW_RUNS="1")
    questions, corpus = bundled_dataset("demo")  # "your own QA set", as a user would have it
    (cwd / "qa.jsonl").write_text(questions.read_text(encoding="utf-8"), encoding="utf-8")
    (cwd / "corpus.jsonl").write_text(corpus.read_text(encoding="utf-8"), encoding="utf-8")
    ask = ["ask", "--offline", "--auto-approve", "In what year did the playwright who wrote The City Heiress die?"]
    asked = (0, 3)  # finished, or stopped by its budget (the tiny model's runs often find nothing): logged either way
    first = run(ask, cwd, env)  # --from-runs replays what people asked
    assert first.returncode in asked, first.stderr[-3000:]

    ran = []
    for command in readme_commands():
        args = tiny(command)
        if "--watch" in args:  # waits for new runs: one arrives, one round trains, it stops (--rounds 1)
            watcher = subprocess.Popen([sys.executable, "-m", "deepresearch", *args, "--rounds", "1"], cwd=cwd,
                                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            try:
                time.sleep(1)
                assert run(ask, cwd, env).returncode in asked
                _, stderr = watcher.communicate(timeout=600)
            finally:
                watcher.kill()
            assert watcher.returncode == 0, f"{command}\n{stderr[-3000:]}"
            ran.append(command)
            continue
        result = run(args, cwd, env)
        assert result.returncode == 0, f"{command}\n{result.stdout[-1500:]}\n{result.stderr[-3000:]}"
        ran.append(command)
        if "--resume" in args:
            assert "round 3:" in result.stderr, result.stderr[-2000:]
    assert len(ran) == len(readme_commands())
    summary = json.loads((cwd / "out" / "eval-trained" / "summary.json").read_text())
    assert summary, "the trained eval wrote no summary"
    assert (cwd / "out" / "eval-base" / "report.md").is_file()
