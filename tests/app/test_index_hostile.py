"""`deepresearch index` over hostile files: a decompression-bomb PDF is skipped with a warning instead
of aborting the folder, and a failed first build of an index leaves no empty index behind."""

from __future__ import annotations

import zlib
from pathlib import Path

from deepresearch.tools.config import ToolSettings
from deepresearch.tools.index.registry import IndexRegistry

from tests.tools.servers import pdf_of

from .helpers import clean_env, cli, one_error_line


def _stream(raw: bytes) -> bytes:
    data = zlib.compress(raw, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"


def bomb_pdf() -> bytes:
    """One page whose font's ToUnicode stream inflates from ~80 kB to 80 MB, past pypdf's 75 MB limit."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        _stream(b"BT /F1 12 Tf 72 712 Td (Hello) Tj ET"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        _stream(b" " * 80_000_000),
    ]
    return pdf_of(objects)


def test_bomb_pdf_is_skipped_and_the_rest_of_the_folder_indexed(tmp_path: Path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "bomb.pdf").write_bytes(bomb_pdf())
    (folder / "notes.md").write_text("# Kelp\n\nKelp forests grow fast in cold water.")
    env = clean_env(tmp_path)
    proc = cli("index", str(folder), "--name", "papers", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "1 added" in proc.stdout and "index 'papers': 1 documents" in proc.stdout
    assert "skipped" in proc.stderr and "bomb.pdf" in proc.stderr and "LimitReachedError" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_failed_first_build_leaves_no_empty_index(tmp_path: Path):
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(bomb_pdf())
    env = clean_env(tmp_path)
    proc = cli("index", str(bomb), "--name", "single", env=env)
    assert proc.returncode == 2
    assert "bomb.pdf" in one_error_line(proc)
    listed = cli("index", "--list", env=env)
    assert "single" not in listed.stdout and not (tmp_path / "data" / "indexes" / "single").exists()


def test_failed_refresh_keeps_an_existing_index(tmp_path: Path):
    good = tmp_path / "good.md"
    good.write_text("# Seals\n\nHarbour seals rest on rocky shores.")
    empty = tmp_path / "empty.txt"
    empty.write_text("   ")
    env = clean_env(tmp_path)
    assert cli("index", str(good), "--name", "mine", env=env).returncode == 0
    failed = cli("index", str(empty), "--name", "mine", env=env)
    assert failed.returncode == 2 and "no text" in one_error_line(failed)
    registry = IndexRegistry(ToolSettings(data_dir=tmp_path / "data"))
    try:
        info = registry.open("mine").info()
    finally:
        registry.close()
    assert info.documents == 1 and info.sources == {str(good): 1}


def test_a_folder_whose_every_file_is_skipped_makes_no_index(tmp_path: Path):
    """Before: `index` exited 0 and `index --list` showed the index with 0 documents."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "empty.txt").write_text("   ")
    (folder / "binary.txt").write_bytes(b"\0\1\2" * 100)
    pictures = tmp_path / "pictures"
    pictures.mkdir()
    (pictures / "cat.png").write_bytes(b"\x89PNG")
    env = clean_env(tmp_path)
    for path, why in ((folder, "every file was skipped (2; first: "), (pictures, "no md, txt, html or pdf file")):
        proc = cli("index", str(path), "--name", "nothing", env=env)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        line = one_error_line(proc)
        assert "nothing was indexed" in line and why in line and str(path) in line, line
        listed = cli("index", "--list", env=env)
        assert "nothing" not in listed.stdout and not (tmp_path / "data" / "indexes" / "nothing").exists()
