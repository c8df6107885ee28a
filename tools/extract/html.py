"""Main-text extraction from HTML with trafilatura, plus title and links."""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin

import lxml.html
from deepresearch.tools.extract.tables import html_tables_as_rows
from pydantic import BaseModel

_SPACES = re.compile(r"[ \t\u00a0]+")


class Link(BaseModel):
    url: str
    text: str


class ExtractedPage(BaseModel):
    title: str
    text: str
    links: list[Link]


def _parse(html: str) -> lxml.html.HtmlElement | None:
    try:
        return lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):  # empty or undecodable documents
        return None


def _title(doc: lxml.html.HtmlElement | None) -> str:
    if doc is None:
        return ""
    for xpath in ("//title", "//meta[@property='og:title']/@content", "//h1"):
        found = doc.xpath(xpath)
        if found:
            value = found[0] if isinstance(found[0], str) else found[0].text_content()
            value = _SPACES.sub(" ", value).strip()
            if value:
                return value
    return ""


def _links(doc: lxml.html.HtmlElement | None, base_url: str, limit: int) -> list[Link]:
    if doc is None or limit <= 0:
        return []
    base = doc.xpath("//base/@href")
    base_url = urljoin(base_url, base[0].strip()) if base else base_url
    seen: set[str] = set()
    links: list[Link] = []
    for anchor in doc.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            continue
        url = urldefrag(urljoin(base_url, href))[0]
        if not url.startswith(("http://", "https://", "local://")) or url in seen:
            continue
        seen.add(url)
        links.append(Link(url=url, text=_SPACES.sub(" ", anchor.text_content()).strip()[:200]))
        if len(links) >= limit:
            break
    return links


def extract_html(html: str, url: str, *, max_links: int = 100) -> ExtractedPage:
    """The article text of a page (trafilatura), its title and its outgoing links.

    Falls back to all visible text when trafilatura finds no main content (e.g. a link list), so a
    page never comes back empty just because it is not an article.
    """
    import trafilatura  # on first use: ~0.1 s of every start-up otherwise

    doc = _parse(html)
    if doc is not None and doc.find(".//table") is not None:
        html_tables_as_rows(doc)  # a row per line: cells stay with their row, the next paragraph stays apart
        html = lxml.html.tostring(doc, encoding="unicode")
    text = trafilatura.extract(
        html, url=url, include_comments=False, include_tables=True, favor_recall=True, deduplicate=False
    )
    if not text:
        text = trafilatura.html2txt(html) if doc is not None else ""
    return ExtractedPage(title=_title(doc), text=(text or "").strip(), links=_links(doc, url, max_links))


def html_to_text(html: str, url: str = "") -> tuple[str, str]:
    """(title, text) of an HTML document, for indexing and reading user files."""
    page = extract_html(html, url, max_links=0)
    return page.title, page.text
