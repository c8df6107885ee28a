"""Benchmark the tools layer on this machine and print one table.

    .venv/bin/python bench/tools.py [--queries 500] [--pages 88] [--sandbox-runs 10]

Measures: index build time and BM25 search p50/p95 on the 18,341-document pool corpus (target p50 < 10 ms),
gold-document recall@10, local-web search over HTTP, page open p50 through the httpx path and through
Chromium (pages from ../shared/data/pages served on 127.0.0.1) with their extraction token-F1, and the
sandbox's start-up overhead (running `pass`).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import json
import os
import re
import statistics
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import httpx  # noqa: E402
import lxml.html  # noqa: E402
from deepresearch.tools.browser.tool import BrowserTool  # noqa: E402
from deepresearch.tools.config import BrowserSettings, SandboxSettings, ToolSettings  # noqa: E402
from deepresearch.tools.index.build import index_paths  # noqa: E402
from deepresearch.tools.index.registry import IndexRegistry  # noqa: E402
from deepresearch.tools.localweb.server import LocalWebServer  # noqa: E402
from deepresearch.tools.sandbox.tool import PythonTool  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_WORD = re.compile(r"\w+")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def token_f1(predicted: str, expected: str) -> float:
    got = collections.Counter(_WORD.findall(predicted.lower()))
    want = collections.Counter(_WORD.findall(expected.lower()))
    common = sum((got & want).values())
    if not common:
        return 0.0
    p, r = common / sum(got.values()), common / sum(want.values())
    return 2 * p * r / (p + r)


def bench_index(rows: list[tuple[str, str, str]], n_queries: int, data_dir: Path) -> None:
    settings = ToolSettings(data_dir=data_dir)
    registry = IndexRegistry(settings)
    start = time.perf_counter()
    index_paths(registry, "pool", [DATA / "pool" / "corpus.jsonl"])
    build = time.perf_counter() - start
    start = time.perf_counter()
    [refresh] = index_paths(registry, "pool", [DATA / "pool" / "corpus.jsonl"])
    refresh_s = time.perf_counter() - start
    index = registry.open("pool")
    questions = [json.loads(line) for line in (DATA / "pool" / "questions.jsonl").open()][:n_queries]
    latencies, found, gold = [], 0, 0
    for q in questions:
        t = time.perf_counter()
        hits = index.search(q["question"], 10)
        latencies.append(time.perf_counter() - t)
        ids = {h.doc_id for h in hits}
        found += sum(g in ids for g in q["gold_doc_ids"])
        gold += len(q["gold_doc_ids"])
    rows.append(("index build (18,341 docs)", f"{build:.2f} s", "SQLite FTS5, porter tokenizer"))
    rows.append(("index refresh, nothing changed", f"{refresh_s:.2f} s", f"{refresh.report.unchanged} unchanged"))
    rows.append(("local search p50", ms(statistics.median(latencies)), f"{len(questions)} pool questions, k=10"))
    rows.append(("local search p95", ms(pct(latencies, 0.95)), "target p50 < 10 ms"))
    rows.append(("gold recall@10 (BM25)", f"{found / gold:.3f}", "share of gold documents in the top 10"))
    with LocalWebServer(index) as web, httpx.Client() as client:
        http_lat = []
        for q in questions[:100]:
            t = time.perf_counter()
            client.get(f"{web.url}/search", params={"q": q["question"], "format": "json"}).raise_for_status()
            http_lat.append(time.perf_counter() - t)
    rows.append(("local web /search p50 (HTTP)", ms(statistics.median(http_lat)), "SearxNG JSON API, 100 queries"))
    registry.close()


async def bench_pages(rows: list[tuple[str, str, str]], n_pages: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(DATA / "pages")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    pages = sorted(p for p in (DATA / "pages").iterdir() if (p / "source.html").is_file())[:n_pages]
    try:
        for render, label in (("never", "httpx + trafilatura"), ("always", "Chromium")):
            tool = BrowserTool(BrowserSettings(
                allow_hosts=[base.removeprefix("http://")], render=render, render_settle_s=0, respect_robots=False,
            ))
            if render == "always":  # start-up is paid once per toolbox; measure it apart
                start = time.perf_counter()
                await tool.browser._ensure_browser()
                rows.append(("Chromium launch (once per toolbox)", f"{time.perf_counter() - start:.2f} s", ""))
            latencies, scores = [], []
            for page in pages:
                t = time.perf_counter()
                out = await tool.invoke({"url": f"{base}/{page.name}/source.html"})
                latencies.append(time.perf_counter() - t)
                expected = lxml.html.fromstring((page / "expected.html").read_text()).text_content()
                scores.append(token_f1(out.output["text"], expected) if out.ok else 0.0)
            await tool.close()
            rows.append((f"page open p50, {label}", ms(statistics.median(latencies)),
                         f"p95 {ms(pct(latencies, 0.95))}; mean token-F1 {statistics.mean(scores):.3f} "
                         f"over {len(pages)} pages"))
    finally:
        server.shutdown()
        server.server_close()


async def bench_sandbox(rows: list[tuple[str, str, str]], runs: int) -> None:
    tool = PythonTool(SandboxSettings())
    if (reason := tool.unavailable_reason()) is not None:
        rows.append(("sandbox start overhead", "n/a", reason))
        return
    latencies = []
    for _ in range(runs):
        t = time.perf_counter()
        out = await tool.invoke({"code": "pass"})
        assert out.ok and out.output["ok"], out
        latencies.append(time.perf_counter() - t)
    t = time.perf_counter()
    await tool.invoke({"code": "import numpy, pandas"})
    rows.append(("sandbox start overhead p50", ms(statistics.median(latencies)),
                 f"bwrap + prlimit + python3 running `pass`, {runs} runs; with numpy+pandas import "
                 f"{ms(time.perf_counter() - t)}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--pages", type=int, default=88)
    parser.add_argument("--sandbox-runs", type=int, default=10)
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tmp:
        bench_index(rows, args.queries, Path(tmp))
    asyncio.run(bench_pages(rows, args.pages))
    asyncio.run(bench_sandbox(rows, args.sandbox_runs))
    table = Table("measure", "value", "notes", title=f"tools bench ({os.cpu_count()} cores)")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


if __name__ == "__main__":
    main()
