"""Extraction quality on 88 real saved pages served from 127.0.0.1, through Chromium and the fast path.

Token F1 (bag of words, as in SQuAD) of the `open` tool's text against readability's expected.html.
"""

from __future__ import annotations

import asyncio
import collections
import re
import statistics

import lxml.html
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.config import BrowserSettings

from .conftest import PAGES, pages_base

_WORD = re.compile(r"\w+")


def token_f1(predicted: str, expected: str) -> float:
    got = collections.Counter(_WORD.findall(predicted.lower()))
    want = collections.Counter(_WORD.findall(expected.lower()))
    common = sum((got & want).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(got.values()), common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def page_dirs() -> list:
    return sorted(p for p in PAGES.iterdir() if (p / "source.html").is_file())


async def mean_f1(base: str, render: str) -> tuple[float, list[tuple[float, str]]]:
    # Saved pages are static: no network-idle wait; two tabs render at once.
    settings = BrowserSettings(
        allow_hosts=[base.removeprefix("http://")], render=render, render_settle_s=0, pool_size=2,
        respect_robots=False,
    )
    tool = BrowserTool(settings)
    gate = asyncio.Semaphore(2)

    async def score(page) -> tuple[float, str]:
        async with gate:
            outcome = await tool.invoke({"url": f"{base}/{page.name}/source.html"})
        assert outcome.ok, outcome.error
        assert outcome.output["method"] == ("chromium" if render == "always" else "httpx")
        expected = lxml.html.fromstring((page / "expected.html").read_text()).text_content()
        return token_f1(outcome.output["text"], expected), page.name

    try:
        scores = await asyncio.gather(*(score(p) for p in page_dirs()))
    finally:
        await tool.close()
    return statistics.mean(s for s, _ in scores), sorted(scores)


async def test_chromium_extraction_keeps_the_article(pages_server):
    assert len(page_dirs()) == 88
    mean, scores = await mean_f1(pages_base(pages_server), "always")
    print(f"Chromium path: mean token F1 {mean:.3f} over {len(scores)} pages; lowest {scores[:3]}")
    assert mean >= 0.8


async def test_fast_path_extraction_keeps_the_article(pages_server):
    mean, scores = await mean_f1(pages_base(pages_server), "never")
    print(f"httpx path: mean token F1 {mean:.3f} over {len(scores)} pages")
    assert mean >= 0.8


def test_token_f1_is_a_real_measure():
    assert token_f1("a b c", "a b c") == 1.0 and token_f1("x y", "a b") == 0.0
    assert 0.0 < token_f1("a b c d", "a b") < 1.0
