"""The baselines' view of the agent's real tools: search and open, through the toolbox.

Calls go through `Tool.invoke` (so they are logged as the agent's are) and their outputs are
read into `Hit`s: title, url, text and — for pages of the local web — the corpus doc id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from deepresearch.evals.run.recorder import RunRecorder
    from deepresearch.tools.base import Tool


class Hit(BaseModel):
    title: str = ""
    url: str = ""
    doc_id: str | None = None
    text: str = ""


def result_items(output: dict[str, Any]) -> list[dict[str, Any]]:
    """The hits of a search call's output (SearchOutput.hits)."""
    items = output.get("hits")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _text_of(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


class EvalTools:
    """Search and open for the baseline systems, plus the corpus lookups the scorer needs.

    `doc_id_for(url)` maps a local-web URL back to its corpus id; `doc_text(doc_id)` returns a
    document's full text (what a citation is checked against).
    """

    def __init__(
        self, *, search_tool: Tool, open_tool: Tool, doc_id_for: Callable[[str], str | None],
        doc_text: Callable[[str], str | None], toolbox: Any = None,
    ):
        self.search_tool = search_tool
        self.open_tool = open_tool
        self.doc_id_for = doc_id_for
        self.doc_text = doc_text
        self.toolbox = toolbox  # what the graph system is given

    def hit_from(self, item: dict[str, Any], text_keys: tuple[str, ...]) -> Hit:
        url = _text_of(item, ("url",))
        doc_id = item.get("doc_id") if isinstance(item.get("doc_id"), str) else None
        return Hit(
            title=_text_of(item, ("title",)), url=url, doc_id=doc_id or (self.doc_id_for(url) if url else None),
            text=_text_of(item, text_keys),
        )

    async def search(self, rec: RunRecorder, query: str, k: int) -> tuple[list[Hit], str | None]:
        """Top-k hits for `query` and the tool's error message (None when it worked)."""
        outcome = await rec.tool(self.search_tool, {"query": query})
        if not outcome.ok or outcome.output is None:
            return [], outcome.error or "search returned nothing"
        hits = [self.hit_from(i, ("snippet",)) for i in result_items(outcome.output)]
        return hits[:k], None

    async def open(self, rec: RunRecorder, url: str) -> tuple[Hit | None, str | None]:
        """The page at `url` as a hit with its clean text, or the tool's error message."""
        outcome = await rec.tool(self.open_tool, {"url": url})
        if not outcome.ok or outcome.output is None:
            return None, outcome.error or "open returned nothing"
        hit = self.hit_from({"url": url, **outcome.output}, ("text",))
        return hit, None
