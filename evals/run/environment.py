"""The world an eval runs in: its corpus indexed, served as a website, and the agent's real tools.

For the run, the corpus goes into a local index under the data dir (named after the corpus
content, so an unchanged corpus is reused), the local web serves it on a free 127.0.0.1 port,
and a toolbox is built whose search goes to that site (SearxNG JSON API) and whose browser may
open it. Everything is stopped when the run ends.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from deepresearch.evals.data.dataset import CorpusDoc
from deepresearch.evals.run.manifest import file_sha256
from deepresearch.evals.run.tooling import EvalTools
from deepresearch.tools.config import ToolSettings

if TYPE_CHECKING:
    from deepresearch.tools.toolbox import Toolbox


def index_name_for(corpus: Path) -> str:
    """`eval-<stem>-<first 10 hex of the content hash>`: a valid, stable index name per corpus."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", corpus.stem)[:30].strip("-.") or "corpus"
    return f"eval-{stem}-{(file_sha256(corpus) or '')[:10]}"


def local_web_doc_id(url: str, web_url: str) -> str | None:
    """The corpus id behind a local-web page URL (`<web>/doc/<id>`) or a `local://index/<id>` URL."""
    from deepresearch.tools.local_urls import local_doc_id

    if (doc_id := local_doc_id(url)) is not None:
        return doc_id
    parts, web = urlsplit(url), urlsplit(web_url)
    if parts.netloc == web.netloc and parts.path.startswith("/doc/"):
        return unquote(parts.path[len("/doc/"):]) or None
    return None


def eval_tool_settings(tools: ToolSettings, web_url: str) -> ToolSettings:
    """The user's tool settings, with search pointed at the local web only and its host allowed.

    The local web serves static HTML, so Chromium is never needed: short paragraphs would
    otherwise trip the "too little text" rule and launch it for nothing.
    """
    host = urlsplit(web_url).netloc
    search = tools.search.model_copy(update={"backends": ["searxng"], "searxng_url": web_url, "cache": False})
    browser = tools.browser.model_copy(
        update={"allow_hosts": [*tools.browser.allow_hosts, host], "render": "never"}
    )
    return tools.model_copy(update={"search": search, "browser": browser})


MEMORY_TOOLS = ("remember", "recall")


def without_memory(toolbox: Toolbox, why: str) -> None:
    """Long-term memory off: runs of one eval or training round must not read what another remembered."""
    for tool in MEMORY_TOOLS:
        toolbox.unavailable[tool] = why


@asynccontextmanager
async def eval_environment(
    corpus: Path | None, docs: list[CorpusDoc] | None, tools: ToolSettings | None, *, use_memory: bool = False,
    port: int | None = None,
) -> AsyncIterator[EvalTools | None]:
    """Yield the tools for one eval run (None when no system searches), and tear them down after.

    Long-term memory is off unless `use_memory`: a finding remembered while answering one
    question (or in an earlier eval) would otherwise leak answers into later ones.
    `port` pins the local web's port (None: the corpus's own, or another when that one is taken). Its URLs
    are in the prompts, so two runs compare byte for byte only on one port: a pinned port that is taken is
    an error, never silently another.
    """
    if corpus is None or tools is None:
        yield None
        return
    from deepresearch.tools.index.documents import SourceDoc
    from deepresearch.tools.index.registry import IndexRegistry
    from deepresearch.tools.localweb.server import LocalWebServer, site_port
    from deepresearch.tools.toolbox import build_toolbox

    by_id = {d.id: d for d in docs or []}
    name = index_name_for(corpus)
    builder = IndexRegistry(tools)
    try:
        index = builder.open(name, create=True)
        source_docs = [SourceDoc(id=d.id, title=d.title, text=d.text) for d in by_id.values()]
        # Incremental: an unchanged corpus only compares content hashes.
        await asyncio.to_thread(index.add, source_docs, str(corpus.resolve()))
    finally:
        builder.close()
    # One connection to the index for the whole run: the toolbox's. The site must exist before the
    # toolbox (its search points there), so the port is chosen first and the server starts on it. Two evals
    # started together can both find the same port free; the one that loses the bind takes another.
    for attempt in range(3):
        web_url = f"http://127.0.0.1:{port or site_port(name)}"
        toolbox = build_toolbox(eval_tool_settings(tools, web_url), offline=True, index=name, searxng_url=web_url)
        site = LocalWebServer(toolbox.local_indexes[0], port=urlsplit(web_url).port or 0)
        try:
            site.start()
            break
        except OSError as exc:
            await toolbox.close()
            if port:
                raise OSError(f"the local web cannot serve on the pinned port {port}: {exc}") from exc
            if attempt == 2:
                raise
    try:
        if not use_memory:
            without_memory(toolbox, "long-term memory is off during evals (questions stay independent)")
        yield EvalTools(
            search_tool=toolbox.get("search"), open_tool=toolbox.get("open"),
            doc_id_for=lambda url: local_web_doc_id(url, web_url),
            doc_text=lambda doc_id: by_id[doc_id].text if doc_id in by_id else None,
            toolbox=toolbox,
        )
    finally:
        site.stop()
        await toolbox.close()
