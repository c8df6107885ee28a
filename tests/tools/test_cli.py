"""`deepresearch index` and `deepresearch web serve`: real commands, bad input exits 2 with one line."""

from __future__ import annotations

import json
import socket

import pytest
import typer
from deepresearch.app.commands import index as index_command
from deepresearch.app.commands import web as web_command
from deepresearch.app.settings import load_settings, set_settings
from typer.testing import CliRunner


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp_path / "data"))
    set_settings(load_settings())
    app = typer.Typer()
    index_command.register(app)
    web_command.register(app)
    runner = CliRunner()
    yield lambda *args: runner.invoke(app, list(args))
    set_settings(load_settings())


def test_index_build_refresh_and_list(cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": str(i), "title": f"T{i}", "text": f"text {i}"}) for i in range(3)))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nalpha")
    result = cli("index", str(corpus), str(notes), "--name", "mine")
    assert result.exit_code == 0, result.output
    assert "3 added" in result.output and "1 added" in result.output and "index 'mine': 4 documents" in result.output
    again = cli("index", str(corpus), "--name", "mine")
    assert "0 added, 0 updated, 3 unchanged, 0 removed" in again.output
    listed = cli("index", "--list")
    assert listed.exit_code == 0 and "mine" in listed.output and "4" in listed.output


@pytest.mark.parametrize("args, message", [
    ((), "give at least one PATH"),
    (("/no/such/path",), "no such file or folder"),
    (("--list", "x"), "--list takes no paths"),
    (("{corpus}", "--name", "../evil"), "bad index name"),
    (("{bad}",), "missing field 'text'"),
])
def test_index_bad_input(cli, tmp_path, args, message):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "t", "text": "x"}))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "1"}))
    result = cli("index", *[a.format(corpus=corpus, bad=bad) for a in args])
    assert result.exit_code == 2 and message in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_web_serve_bad_input(cli, tmp_path):
    result = cli("web", "serve", "--index", "nope")
    assert result.exit_code == 2 and "no index named 'nope'" in result.output
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "t", "text": "x"}))
    cli("index", str(corpus), "--name", "w")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = cli("web", "serve", "--index", "w", "--port", str(busy.getsockname()[1]))
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1" in result.output
    assert cli("web", "serve", "--port", "70000").exit_code == 2


def test_web_serve_serves_until_stopped(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    import httpx

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Puffins", "text": "Puffins nest in burrows on cliffs."}))
    env = {**os.environ, "DEEPRESEARCH_DATA_DIR": str(tmp_path / "data")}
    script = (
        "import sys, typer\n"
        "from deepresearch.app.commands import index, web\n"
        "app = typer.Typer()\nindex.register(app)\nweb.register(app)\n"
        "app(sys.argv[1:])\n"
    )
    subprocess.run([sys.executable, "-c", script, "index", str(corpus), "--name", "birds"], env=env, check=True,
                   capture_output=True, timeout=60)
    proc = subprocess.Popen([sys.executable, "-c", script, "web", "serve", "--index", "birds", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        url = first.split(" at ")[1].strip()
        body = httpx.get(f"{url}/search", params={"q": "puffins burrows", "format": "json"}, timeout=10).json()
        assert body["results"][0]["doc_id"] == "d1"
        proc.send_signal(signal.SIGTERM)  # as docker stop does; Ctrl-C (SIGINT) takes the same path
        assert proc.wait(timeout=10) == 0
        assert proc.stdout.read().strip().endswith("stopped")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
