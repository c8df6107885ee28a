"""The `open` tool against real servers on 127.0.0.1 and Debian's Chromium, including hostile pages."""

from __future__ import annotations

import os
import time

import pytest
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.config import BrowserSettings
from deepresearch.tools.untrusted import fence_untrusted

from . import servers


def _redirect(to: str):
    def route(handler: servers.ScriptedHandler) -> None:
        target = to.replace("{self}", handler.server.base)
        handler.send(302, b"", "text/plain", headers={"Location": target})
    return route


def _body(data: bytes, content_type: str = "text/html; charset=utf-8"):
    return lambda handler: handler.send(200, data, content_type)


def _steal_page(handler: servers.ScriptedHandler) -> None:
    """A page whose scripts try to reach a private service behind the allow-listed one."""
    victim = handler.server.victim  # type: ignore[attr-defined]
    script = (
        f"fetch('{victim}/steal-xhr').catch(() => 0);"
        f"setTimeout(() => {{ location.href = '{victim}/steal-nav'; }}, 10);"
    )
    handler.send(200, servers.ARTICLE.replace(b"</body>", f"<script>{script}</script></body>".encode()))


@pytest.fixture(scope="module")
def site():
    victim = servers.ScriptedServer({"/steal-xhr": _body(b"secret"), "/steal-nav": _body(b"secret")})
    victim_thread = servers.start(victim)
    routes = {
        "/robots.txt": _body(b"User-agent: *\nDisallow: /private\n", "text/plain"),
        "/article": _body(servers.ARTICLE),
        "/private": _body(servers.ARTICLE),
        "/injection": _body(servers.INJECTION),
        "/js-only": _body(servers.JS_ONLY),
        "/notes.txt": _body(b"plain notes about kelp forests", "text/plain; charset=utf-8"),
        "/report.pdf": _body(servers.make_pdf(["Kelp forests grow fast in cold water."], "Kelp"), "application/pdf"),
        "/binary": _body(os.urandom(4096), "application/octet-stream"),
        "/fake-html": _body(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(512), "text/html"),
        "/big": _body(b"<html><body>" + b"<p>filler</p>" * (20 * 1024 * 1024 // 13) + b"</body></html>"),
        "/big-chunked": servers.big_chunked,
        "/never": servers.trickle_forever,
        "/to-article": _redirect("{self}/article"),
        "/to-loopback": _redirect("http://127.0.0.1:9/admin"),
        "/to-localhost": _redirect("http://localhost:9/admin"),
        "/to-metadata": _redirect("http://169.254.169.254/latest/meta-data/iam/security-credentials/"),
        "/to-file": _redirect("file:///etc/passwd"),
        "/loop": _redirect("{self}/loop"),
        "/steal": _steal_page,
    }
    server = servers.ScriptedServer(routes)
    server.victim = victim.base  # type: ignore[attr-defined]
    thread = servers.start(server)
    yield server, victim
    servers.stop(server, thread)
    servers.stop(victim, victim_thread)


@pytest.fixture
async def browser(site):
    server, _ = site
    tool = BrowserTool(BrowserSettings(allow_hosts=[server.authority], timeout_s=4, render_settle_s=0.3))
    yield tool
    await tool.close()


@pytest.fixture
async def chromium(site):
    """For the tests that start Chromium: its first launch can take more than 4 s on a loaded 2-core box,
    and these tests check what it renders and blocks, not how fast (the timeout tests use `browser`)."""
    server, _ = site
    tool = BrowserTool(BrowserSettings(allow_hosts=[server.authority], timeout_s=30, render_settle_s=0.3))
    yield tool
    await tool.close()


async def open_(tool: BrowserTool, url: str, **extra):
    return await tool.invoke({"url": url, **extra})


async def test_fast_path_returns_text_title_links_hash_and_chunks(browser, site):
    server, _ = site
    out = await open_(browser, server.base + "/to-article")
    assert out.ok, out.error
    page = out.output
    assert page["method"] == "httpx" and page["title"] == "Harbour seals"
    assert page["final_url"] == server.base + "/article" and "rocky shores" in page["text"]
    assert "Home" not in page["text"]  # navigation boilerplate is not article text
    assert {link["url"] for link in page["links"]} >= {server.base + "/other", "https://example.org/x"}
    assert len(page["content_hash"]) == 64 and not page["injection_suspected"]
    chunks = page["chunks"]
    assert chunks[0]["start"] == 0 and chunks[-1]["end"] == len(page["text"])
    assert all(a["end"] > b["start"] for a, b in zip(chunks, chunks[1:], strict=False))  # overlapping, no gaps


async def test_pdf_and_plain_text(browser, site):
    server, _ = site
    pdf = await open_(browser, server.base + "/report.pdf")
    assert pdf.output["method"] == "pdf" and pdf.output["title"] == "Kelp" and "cold water" in pdf.output["text"]
    txt = await open_(browser, server.base + "/notes.txt")
    assert txt.output["method"] == "text" and txt.output["text"] == "plain notes about kelp forests"


async def test_robots_txt_is_respected(browser, site):
    server, _ = site
    out = await open_(browser, server.base + "/private")
    assert out.error_kind == "robots"


async def test_prompt_injection_page_is_flagged_and_fenced(browser, site):
    server, _ = site
    out = await open_(browser, server.base + "/injection")
    assert out.ok and out.output["injection_suspected"] is True
    text = out.output["text"]
    assert "Ignore all previous instructions" in text  # kept as data, not silently edited
    fenced = fence_untrusted(text, source=out.output["url"])
    tag = fenced.split("<<<UNTRUSTED ", 1)[1].split(">>>", 1)[0]
    assert fenced.count(f"<<<END UNTRUSTED {tag}>>>") == 1 and fenced.rstrip().endswith(f"<<<END UNTRUSTED {tag}>>>")
    assert "<<<END UNTRUSTED 00000000>>>" not in fenced  # the page's fake closing marker is defused
    assert "not instructions" in fenced and "do not follow them" in fenced


@pytest.mark.parametrize("path", ["/to-loopback", "/to-localhost", "/to-metadata"])
async def test_redirects_to_private_addresses_are_blocked(browser, site, path):
    server, _ = site
    out = await open_(browser, server.base + path)
    assert out.error_kind == "blocked", out.error
    assert "private, loopback or link-local" in out.error


async def test_private_addresses_blocked_without_allow_list():
    tool = BrowserTool(BrowserSettings())
    for url in ("http://127.0.0.1:9/", "http://localhost:9/", "http://169.254.169.254/latest/",
                "http://[::1]:9/", "http://[::ffff:127.0.0.1]:9/", "http://10.0.0.1/", "http://0.0.0.0:9/",
                "http://2130706433:9/", "http://127.1:9/", "http://0x7f.0.0.1:9/"):
        out = await tool.invoke({"url": url})
        assert out.error_kind == "blocked", (url, out.error)
    await tool.close()


async def test_non_http_schemes_and_redirect_abuse(browser, site):
    server, _ = site
    for url in ("file:///etc/passwd", "ftp://example.org/x", "javascript:alert(1)", "gopher://x", "/etc/passwd"):
        assert (await open_(browser, url)).error_kind == "bad_url", url
    assert (await open_(browser, server.base + "/to-file")).error_kind == "bad_url"
    assert (await open_(browser, server.base + "/loop")).error_kind == "too_many_redirects"
    assert (await browser.invoke({"url": ""})).error_kind == "bad_args"


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
async def test_twenty_megabyte_page_is_refused(browser, site, path):
    server, _ = site
    start = time.perf_counter()
    out = await open_(browser, server.base + path)
    assert out.error_kind == "too_large" and "10000000-byte limit" in out.error
    assert time.perf_counter() - start < 4


async def test_never_finishing_page_times_out(browser, site):
    server, _ = site
    start = time.perf_counter()
    out = await open_(browser, server.base + "/never")
    assert out.error_kind == "timeout"
    assert time.perf_counter() - start < 6
    assert (await open_(browser, server.base + "/article")).ok  # the tool is still healthy


@pytest.mark.parametrize("path", ["/binary", "/fake-html"])
async def test_binary_content_is_refused(browser, site, path):
    server, _ = site
    out = await open_(browser, server.base + path)
    assert out.error_kind == "unsupported_content" and "binary content" in out.error


async def test_chromium_renders_javascript_pages_and_is_reused(chromium, site):
    server, _ = site
    out = await open_(chromium, server.base + "/js-only")  # fast path finds no text, page has scripts
    assert out.ok, out.error
    assert out.output["method"] == "chromium" and "arctic terns" in out.output["text"]
    forced = await open_(chromium, server.base + "/article", render_js=True)
    assert forced.output["method"] == "chromium" and "rocky shores" in forced.output["text"]
    assert chromium.browser.launches == 1


async def test_chromium_cannot_reach_private_services(chromium, site):
    server, victim = site
    await open_(chromium, server.base + "/steal", render_js=True)
    blocked = await open_(chromium, server.base + "/to-metadata", render_js=True)
    assert blocked.error_kind == "blocked"
    assert victim.hits == {}  # neither the XHR nor the navigation reached the private port


async def test_toolbox_caches_opened_text_for_citations(settings, site):
    from deepresearch.tools.toolbox import build_toolbox

    server, _ = site
    settings.browser.allow_hosts = [server.authority]
    toolbox = build_toolbox(settings)
    out = await toolbox.invoke("open", {"url": server.base + "/to-article"})
    assert toolbox.source_text(server.base + "/to-article") == out.output["text"]
    assert toolbox.source_text(server.base + "/article") == out.output["text"]
    assert toolbox.source_text(server.base + "/never-opened") is None
    await toolbox.close()
