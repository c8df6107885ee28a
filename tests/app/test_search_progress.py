"""`ask`'s progress says when a search backend failed and which one answered (the user must not take an
answer from the local index for a web search): the real CLI, a SearxNG URL nobody listens on."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free once closed: connections to it are refused


def test_a_failed_web_backend_and_the_one_that_answered_are_shown(tmp_path: Path):
    with fake_openai_server() as server:
        env = clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=server.base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1",
                        DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL=f"http://127.0.0.1:{_closed_port()}")
        failing = cli("ask", "--search", "searxng,local", "Who designed the Analytical Engine?", env=env)
        offline = cli("ask", "--offline", "Who designed the Analytical Engine?", env=env)
    assert failing.returncode in (0, 3), failing.stderr[-3000:]
    said = [line for line in failing.stderr.splitlines() if "failed" in line]
    # said once, though every search fell back; by whichever step searched first (steps run side by side)
    assert len(said) == 1 and re.fullmatch(r"  step \d+: search backend searxng \(network\) failed; answered by "
                                           r"the local index", said[0]), failing.stderr[-3000:]
    assert offline.returncode in (0, 3) and "failed" not in offline.stderr, offline.stderr[-3000:]
