"""The `open` tool: a URL in, clean text with title, links, hash and chunk offsets out.

Order of work: local:// documents come from the index with no network; web pages go through robots.txt,
then the httpx fast path (guarded, size-capped), then Chromium when the page needs JavaScript, the fast
path found too little text, or the caller asked. PDFs become text with pypdf, in a child process. Anything else
is refused.

One deadline (`timeout_s`) covers the whole call: robots.txt, every fetch and redirect, the PDF parse and the
Chromium render each get what is left of it, never a fresh allowance of their own.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import OrderedDict
from typing import Any, ClassVar, Literal

from deepresearch.tools.base import Surfaced, Tool, ToolFailure
from deepresearch.tools.browser.chromium import BrowserPool
from deepresearch.tools.browser.fetch import Fetched, Fetcher, check_url
from deepresearch.tools.browser.netpolicy import AddressPolicy
from deepresearch.tools.browser.robots import RobotsCache
from deepresearch.tools.config import BrowserSettings
from deepresearch.tools.extract.chunks import Chunk, chunk_offsets
from deepresearch.tools.extract.html import ExtractedPage, Link, extract_html
from deepresearch.tools.extract.pdf import PdfError
from deepresearch.tools.extract.pdf_process import pdf_to_text_in_process
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.index.store import IndexNotFound
from deepresearch.tools.local_urls import local_url, parse_local_url
from deepresearch.tools.untrusted import looks_like_injection
from pydantic import BaseModel, Field

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/csv", "application/json", "text/xml", "application/xml"})
PAGE_CACHE_SIZE = 256
# robots.txt may use at most this share of the call's time: a site that trickles it must leave time for
# the page itself (an unanswered robots.txt counts as "no rules", as an unreachable one does).
ROBOTS_SHARE = 0.25
_SCRIPT_TAG = re.compile(r"<script[\s>]", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)


class OpenInput(BaseModel):
    url: str = Field(min_length=1, max_length=4096, description="http(s) or local:// URL to read")
    render_js: bool = Field(False, description="render the page in Chromium (for pages built by JavaScript)")


class OpenOutput(BaseModel):
    url: str
    final_url: str
    title: str
    text: str = Field(description="clean page text: untrusted data, render with fence_untrusted() for a prompt")
    links: list[Link]
    content_hash: str = Field(description="sha256 of the full clean text")
    chunks: list[Chunk] = Field(description="character offsets into text, for citations")
    method: Literal["local", "httpx", "chromium", "pdf", "text"]
    content_type: str
    truncated: bool = False
    doc_id: str | None = None
    injection_suspected: bool = Field(False, description="the text contains instruction-like phrases")
    notes: list[str] = Field(default_factory=list)


def _decode(body: bytes, content_type_header: str) -> str:
    match = re.search(r"charset=([\w-]+)", content_type_header, re.IGNORECASE)
    charset = match.group(1) if match else None
    if charset is None:
        meta = _META_CHARSET.search(body[:4096])
        charset = meta.group(1).decode() if meta else "utf-8"
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _kind(fetched: Fetched) -> str:
    """'html', 'pdf', 'text' or 'binary' from the declared type, checked against the bytes."""
    declared = fetched.content_type
    head = fetched.body[:1024]
    if declared == "application/pdf" or head.startswith(b"%PDF-"):
        return "pdf"
    if b"\0" in head:
        return "binary"
    if declared in HTML_TYPES:
        return "html"
    if declared in TEXT_TYPES or declared.startswith("text/"):
        return "text"
    if not declared or declared == "application/octet-stream":
        lowered = head.lstrip().lower()
        if lowered.startswith((b"<!doctype html", b"<html")):
            return "html"
    return "binary"


class BrowserTool(Tool[OpenInput, OpenOutput]):
    name: ClassVar[str] = "open"
    description: ClassVar[str] = "Open a URL from the search results and read its text."
    input_model: ClassVar[type[OpenInput]] = OpenInput
    plannable: ClassVar[bool] = True

    def sources(self, output: dict[str, Any]) -> list[Surfaced]:
        """The page itself, read in full (under the URL it ended at)."""
        if not output.get("text"):
            return []
        return [Surfaced(url=output.get("final_url") or output["url"], title=output.get("title", ""),
                         doc_id=output.get("doc_id"), text=output["text"])]

    def __init__(self, settings: BrowserSettings, *, registry: IndexRegistry | None = None, offline: bool = False):
        self.settings = settings
        self.registry = registry
        self.offline = offline
        self.policy = AddressPolicy(block_private=settings.block_private, allow_hosts=list(settings.allow_hosts))
        self.fetcher = Fetcher(settings, self.policy)
        self.robots = RobotsCache(self.fetcher)
        self.browser = BrowserPool(settings, self.fetcher)
        self.pages: OrderedDict[str, OpenOutput] = OrderedDict()

    # --- results cache (the citation checker reads source text from here) -------------------------

    def _remember(self, result: OpenOutput) -> None:
        for key in {result.url, result.final_url}:
            self.pages[key] = result
            self.pages.move_to_end(key)
        while len(self.pages) > PAGE_CACHE_SIZE:
            self.pages.popitem(last=False)

    def cached(self, url: str) -> OpenOutput | None:
        return self.pages.get(url)

    # --- opening ----------------------------------------------------------------------------------

    async def run(self, args: OpenInput) -> OpenOutput:
        url = args.url.strip()
        if url.startswith("local://"):
            result = self._open_local(url)
        else:
            deadline = asyncio.get_running_loop().time() + self.settings.timeout_s
            try:
                async with asyncio.timeout_at(deadline):
                    result = await self._open_web(url, render_js=args.render_js, deadline=deadline)
            except TimeoutError:
                raise ToolFailure("timeout", f"{url}: not done within {self.settings.timeout_s:g}s") from None
        self._remember(result)
        return result

    def _open_local(self, url: str) -> OpenOutput:
        parsed = parse_local_url(url)
        if parsed is None or self.registry is None:
            raise ToolFailure("bad_url", f"not a local document URL: {url!r} (expected local://INDEX/DOC_ID)")
        index_name, doc_id = parsed
        try:
            doc = self.registry.open(index_name).get(doc_id)
        except (IndexNotFound, ValueError) as exc:
            raise ToolFailure("not_found", str(exc)) from None
        if doc is None:
            raise ToolFailure("not_found", f"no document {doc_id!r} in index {index_name!r}")
        page = ExtractedPage(title=doc.title, text=doc.text, links=[])
        return self._result(url, local_url(index_name, doc_id), page, "local", "text/plain", doc_id=doc.id)

    async def _open_web(self, url: str, *, render_js: bool, deadline: float) -> OpenOutput:
        host, port = check_url(url)
        if self.offline and not self.policy.host_allowed(host, port):
            raise ToolFailure("offline", f"offline mode: {host} is not a local address on the allow-list")
        if self.settings.respect_robots:
            robots_deadline = min(deadline, asyncio.get_running_loop().time() + self.settings.timeout_s * ROBOTS_SHARE)
            if not await self.robots.allowed(url, deadline=robots_deadline):
                raise ToolFailure("robots", f"robots.txt of {host} disallows {url}")
        fetched = await self.fetcher.fetch(url, deadline=deadline)
        if fetched.status >= 400:
            raise ToolFailure("http_error", f"{url}: HTTP {fetched.status}")
        kind = _kind(fetched)
        if kind == "binary":
            raise ToolFailure(
                "unsupported_content",
                f"{fetched.url}: binary content ({fetched.content_type or 'unknown type'}); "
                "open reads HTML, text and PDF",
            )
        if kind == "pdf":
            try:  # in a process the deadline kills: parsing a small PDF can take minutes
                title, text = await pdf_to_text_in_process(fetched.body, max_chars=self.settings.max_text_chars * 2)
            except PdfError as exc:
                raise ToolFailure("unsupported_content", f"{fetched.url}: {exc}") from None
            return self._result(url, fetched.url, ExtractedPage(title=title, text=text, links=[]), "pdf",
                                fetched.content_type)
        content_type_header = fetched.headers.get("content-type", "")
        if kind == "text":
            text = _decode(fetched.body, content_type_header)
            return self._result(url, fetched.url, ExtractedPage(title="", text=text, links=[]), "text",
                                fetched.content_type)
        return await self._html(url, fetched, _decode(fetched.body, content_type_header), render_js=render_js,
                                deadline=deadline)

    async def _html(self, url: str, fetched: Fetched, html: str, *, render_js: bool, deadline: float) -> OpenOutput:
        mode = self.settings.render
        forced = mode == "always" or (mode == "auto" and render_js)
        page = ExtractedPage(title="", text="", links=[])
        if not forced:
            page = await asyncio.to_thread(extract_html, html, fetched.url, max_links=self.settings.max_links)
        # Too little text only means "needs JavaScript" when the page has scripts; without any, Chromium
        # would render exactly what we already parsed.
        too_little = len(page.text) < self.settings.min_text_chars and _SCRIPT_TAG.search(html) is not None
        wants_browser = forced or (mode == "auto" and too_little)
        if not wants_browser:
            return self._result(url, fetched.url, page, "httpx", fetched.content_type)
        try:
            # Chromium gets the page we already have (no second fetch) and what is left of the deadline.
            rendered = await self.browser.render(fetched.url, deadline=deadline, document=fetched)
        except TimeoutError:
            raise ToolFailure("timeout", f"{url}: rendering not done within {self.settings.timeout_s:g}s") from None
        except ToolFailure as exc:
            if exc.kind in ("blocked", "timeout"):
                raise
            if forced:  # nothing extracted yet: fall back to the fast path's reading of the same bytes
                page = await asyncio.to_thread(extract_html, html, fetched.url, max_links=self.settings.max_links)
            note = f"Chromium failed ({exc.message}); text is from the fast path"
            return self._result(url, fetched.url, page, "httpx", fetched.content_type, notes=[note])
        shown = await asyncio.to_thread(extract_html, rendered.html, rendered.url, max_links=self.settings.max_links)
        if not forced and len(shown.text) < len(page.text):
            shown = page  # rendering lost text (e.g. a script replaced the article); keep what we had
        return self._result(url, rendered.url, shown, "chromium", fetched.content_type)

    def _result(
        self, url: str, final_url: str, page: ExtractedPage, method: str, content_type: str,
        *, doc_id: str | None = None, notes: list[str] | None = None,
    ) -> OpenOutput:
        full_hash = hashlib.sha256(page.text.encode()).hexdigest()
        truncated = len(page.text) > self.settings.max_text_chars
        text = page.text[: self.settings.max_text_chars]
        return OpenOutput(
            url=url, final_url=final_url, title=page.title, text=text, links=page.links, content_hash=full_hash,
            chunks=chunk_offsets(text, self.settings.chunk_chars, self.settings.chunk_overlap),
            method=method, content_type=content_type, truncated=truncated, doc_id=doc_id,  # type: ignore[arg-type]
            injection_suspected=looks_like_injection(text), notes=notes or [],
        )

    async def close(self) -> None:
        await self.browser.close()
        await self.fetcher.close()
