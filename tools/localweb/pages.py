"""HTML and JSON bodies the local web serves."""

from __future__ import annotations

import html
import json
from urllib.parse import quote

from deepresearch.tools.index.documents import IndexHit, StoredDoc

_STYLE = "body{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.5}"


def doc_path(doc_id: str) -> str:
    return "/doc/" + quote(doc_id, safe="-._~")


def searxng_json(query: str, hits: list[IndexHit], base_url: str) -> bytes:
    """The subset of SearxNG's JSON answer that clients read, plus `doc_id` (ignored by other clients)."""
    results = [
        {
            "url": base_url + doc_path(h.doc_id), "title": h.title, "content": h.snippet, "engine": "local",
            "engines": ["local"], "positions": [h.rank], "score": h.score, "category": "general",
            "doc_id": h.doc_id,
        }
        for h in hits
    ]
    body = {
        "query": query, "number_of_results": len(results), "results": results, "answers": [],
        "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": [],
    }
    return json.dumps(body).encode()


def _page(title: str, body: str) -> bytes:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    ).encode()


def search_form(index: str, query: str = "") -> str:
    return (
        f'<form action="/search" method="get"><input name="q" value="{html.escape(query, quote=True)}" size="50">'
        f' <button>Search {html.escape(index)}</button></form>'
    )


def search_page(index: str, query: str, hits: list[IndexHit]) -> bytes:
    items = "\n".join(
        f'<li><a href="{doc_path(h.doc_id)}">{html.escape(h.title or h.doc_id)}</a><p>{html.escape(h.snippet)}</p></li>'
        for h in hits
    )
    return _page(f"{query} - {index}", f"{search_form(index, query)}\n<ol>\n{items}\n</ol>")


def home_page(index: str, documents: int) -> bytes:
    return _page(index, f"<h1>{html.escape(index)}</h1><p>{documents} documents.</p>{search_form(index)}")


def document_page(doc: StoredDoc) -> bytes:
    paragraphs = [p.strip() for p in doc.text.replace("\r\n", "\n").split("\n") if p.strip()]
    article = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    title = doc.title or doc.id
    return _page(title, f"<article>\n<h1>{html.escape(title)}</h1>\n{article}\n</article>")


def not_found_page(what: str) -> bytes:
    return _page("Not found", f"<h1>Not found</h1><p>{html.escape(what)}</p>")
