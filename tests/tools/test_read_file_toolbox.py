"""read_file within allowed roots, and the Toolbox surface the agent graph uses."""

from __future__ import annotations

import os

from deepresearch.tools.base import ToolOutcome
from deepresearch.tools.toolbox import build_toolbox

from .servers import make_pdf


async def test_read_file_reads_supported_files_inside_roots(settings, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Notes\n\nKelp grows half a metre a day.")
    (root / "r.pdf").write_bytes(make_pdf(["Page one about puffins."], "Puffins"))
    (root / "p.html").write_text("<html><head><title>Owls</title></head><body><p>" + "Owls hunt at night. " * 20
                                 + "</p></body></html>")
    settings.files.allowed_roots = [root]
    toolbox = build_toolbox(settings)
    md = await toolbox.invoke("read_file", {"path": str(root / "a.md")})
    assert md.ok and md.output["title"] == "Notes" and "half a metre" in md.output["text"]
    relative = await toolbox.invoke("read_file", {"path": "r.pdf"})  # relative to the first root
    assert relative.output["title"] == "Puffins" and "puffins" in relative.output["text"]
    html = await toolbox.invoke("read_file", {"path": str(root / "p.html")})
    assert html.output["title"] == "Owls" and "hunt at night" in html.output["text"]
    assert toolbox.source_text(str((root / "a.md").resolve())) == md.output["text"]
    await toolbox.close()


async def test_read_file_refuses_escapes_binaries_and_missing_files(settings, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, root / "link.txt")
    (root / "blob.txt").write_bytes(b"\x00\x01binary")
    (root / "data.bin").write_bytes(b"abc")
    settings.files.allowed_roots = [root]
    toolbox = build_toolbox(settings)
    cases = {
        str(outside): "forbidden", "../secret.txt": "forbidden", "link.txt": "forbidden",
        "/etc/passwd": "forbidden", "missing.txt": "not_found", "blob.txt": "unsupported_content",
        "data.bin": "unsupported_content", str(root): "not_found",
    }
    for path, kind in cases.items():
        out = await toolbox.invoke("read_file", {"path": path})
        assert out.error_kind == kind, (path, out.error)
    await toolbox.close()


async def test_read_file_is_disabled_without_roots(settings):
    toolbox = build_toolbox(settings)
    assert "read_file" not in toolbox.names()
    out = await toolbox.invoke("read_file", {"path": "/etc/passwd"})
    assert out.error_kind == "unavailable" and "allowed_roots" in out.error
    await toolbox.close()


async def test_toolbox_names_describe_and_unknown_tools(pool_settings):
    toolbox = build_toolbox(pool_settings, offline=True, index="pool")
    assert set(toolbox.names()) >= {"search", "open", "python", "remember", "recall"}
    schemas = {d["name"]: d["input_schema"] for d in toolbox.describe()}
    assert schemas["search"]["required"] == ["query"] and schemas["open"]["required"] == ["url"]
    assert schemas["python"]["required"] == ["code"]
    assert toolbox.get("search").name == "search"
    out = await toolbox.invoke("rm -rf", {"x": 1})
    assert isinstance(out, ToolOutcome) and out.error_kind == "unknown_tool"
    out = await toolbox.invoke("search", "not a dict")  # type: ignore[arg-type]
    assert out.error_kind == "bad_args"
    await toolbox.close()


async def test_missing_index_is_a_clear_error(settings):
    import pytest
    from deepresearch.tools.index.store import IndexNotFound

    with pytest.raises(IndexNotFound, match="no index named 'nope'"):
        build_toolbox(settings, index="nope")
