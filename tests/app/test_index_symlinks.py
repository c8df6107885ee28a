"""A symlink inside an indexed folder that points outside it is not followed: its target is neither indexed nor
served by `deepresearch web serve` (a real server process, searched over loopback HTTP). Before, a link to
/etc/passwd or to a private file next to the folder was indexed and served like the folder's own files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from .helpers import clean_env, cli


def test_symlinks_out_of_the_folder_are_neither_indexed_nor_served(tmp_path: Path):
    outside = tmp_path / "private"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text("The vault code is zebra-4471.")
    (outside / "folder" / "plans.md").write_text("# Plans\n\nThe zebra plans are private.")
    papers = tmp_path / "papers"
    (papers / "sub").mkdir(parents=True)
    (papers / "notes.md").write_text("# Kelp\n\nKelp forests grow fast in cold water.")
    (papers / "leak.txt").symlink_to(outside / "secret.txt")
    (papers / "passwd.txt").symlink_to("/etc/passwd")
    (papers / "sub" / "linked").symlink_to(outside / "folder")
    (papers / "sub" / "again.md").symlink_to("../notes.md")  # inside the folder: followed
    env = clean_env(tmp_path, PYTHONUNBUFFERED="1")

    built = cli("index", str(papers), "--name", "papers", env=env)
    assert built.returncode == 0, built.stderr
    assert "2 added" in built.stdout, built.stdout  # notes.md and sub/again.md
    for name in ("leak.txt", "passwd.txt", "linked"):
        assert f"skipped {papers}/" in built.stderr and name in built.stderr, built.stderr
    assert "outside" in built.stderr and "Traceback" not in built.stderr

    serve = [sys.executable, "-m", "deepresearch", "web", "serve", "--index", "papers", "--port", "0"]
    server = subprocess.Popen(serve, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL)
    try:
        first = server.stdout.readline()
        assert "(2 documents)" in first, first
        url = first.rsplit(" at ", 1)[1].strip()
        for query in ("zebra", "vault", "root"):
            found = httpx.get(f"{url}/search", params={"q": query, "format": "json"}, timeout=10).json()
            assert found["results"] == [], (query, found)
        assert "cold water" in httpx.get(f"{url}/search", params={"q": "kelp", "format": "json"}).text
        for doc in ("papers/leak.txt", "papers/passwd.txt", "papers/sub/linked/plans.md"):
            assert httpx.get(f"{url}/doc/{doc}", timeout=10).status_code == 404
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert os.path.exists("/etc/passwd")
