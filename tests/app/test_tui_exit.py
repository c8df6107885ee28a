"""When the TUI stops on an error it exits non-zero with one line naming the error and the run it stopped,
not a screen of traceback and exit 0: the real `deepresearch tui` on a pseudo-terminal."""

from __future__ import annotations

import sys
from pathlib import Path

from .fake_openai import fake_openai_server
from .helpers import fake_model_env as _env
from .terminal import Terminal
from .test_store_damage import _overwrite


def test_a_store_damaged_under_the_tui_ends_it_with_one_line_and_exit_1(tmp_path: Path):
    with fake_openai_server() as server:
        terminal = Terminal([sys.executable, "-m", "deepresearch", "tui", "--offline"],
                            {**_env(tmp_path, server.base_url), "TERM": "xterm"})
        try:
            terminal.wait_for(lambda: "Ready." in terminal.text, timeout_s=240)
            db = tmp_path / "data" / "traces.db"
            _overwrite(db)
            terminal.type("Who designed the Analytical Engine?\r")
            status = terminal.wait_exit()
        finally:
            terminal.close()
    assert status == 1, terminal.text[-3000:]
    tail = terminal.text[terminal.text.rindex("error: "):]
    assert tail.startswith(f"error: the TUI stopped: trace store {db} is damaged (file is not a database); "
                           "move it aside with `deepresearch runs repair`"), tail
    assert "; run " in tail and " was going" in tail  # the run it stopped, named
    assert "Traceback" not in terminal.text
