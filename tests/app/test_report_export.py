"""Report export (`--format md|html|pdf|json`) for `runs show` and `ask`: real runs, real Chromium, pypdf."""

from __future__ import annotations

import json
import unicodedata
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path

import pytest
from deepresearch.agent.graph.nodes.writer import render_report
from deepresearch.agent.graph.schemas import ReportPoint
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.report_html import render_html
from deepresearch.app.report_view import report_view, view_of_run
from pypdf import PdfReader

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli, one_error_line
from .stored_runs import QUESTION, finished_and_stopped


def pdf_text(data: bytes) -> str:
    """The text of every page, whitespace collapsed and ligatures (ﬁ) unfolded."""
    text = " ".join(page.extract_text() for page in PdfReader(BytesIO(data)).pages)
    return " ".join(unicodedata.normalize("NFKC", text).split())


class _Page(HTMLParser):
    """Text, tags and attributes of an HTML page, as a browser's parser sees them."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def cite(n: int, claim: str, *, verified: bool = True, source: str = "https://example.org/a", title: str = "A",
         quote: str = "A quote.") -> dict:
    return {"n": n, "source": source, "title": title, "doc_id": None, "quote": quote, "claim": claim,
            "verified": verified, "reason": "" if verified else "quote not found in the source"}


def test_view_reads_the_writers_report():
    answer = cite(1, "Charles Babbage", quote="It was designed by Charles Babbage.", title="Analytical Engine")
    cites = [cite(2, "designed in 1837", quote="It was designed in 1837."),
             cite(3, "Ada wrote about it", verified=False), None]
    points = [ReportPoint(text="designed in 1837", cite=1), ReportPoint(text="Ada wrote about it", cite=2),
              ReportPoint(text="a point the model left uncited", cite=9)]
    md = render_report("Who designed the Analytical Engine?", "Charles Babbage", answer, points, cites,
                       "This run stopped early: budget. The answer may be incomplete.")
    view = report_view(run_id="r1", question="Who designed the Analytical Engine?", status="budget_stop",
                       answer="Charles Babbage", report=md, citations=[answer, *(c for c in cites if c)])
    assert view.answer == "Charles Babbage" and view.answer_cite == 1
    assert view.note.startswith("This run stopped early")
    assert [(p.text, p.cite, p.removed) for p in view.points] == [
        ("designed in 1837", 2, None), ("Ada wrote about it", None, "quote not found in the source"),
        ("a point the model left uncited", None, None)]
    assert [(s.n, s.title, s.quote) for s in view.sources] == [
        (1, "Analytical Engine", "It was designed by Charles Babbage."), (2, "A", "It was designed in 1837.")]
    assert view.removed == 1


def test_view_and_html_show_a_multi_hop_answers_chain_under_the_answer():
    """The writer's "**How:**" line (render.py chain_line): the quote that names the bridge [2], then the answer's
    own [1]. The view keeps it as cited steps, the HTML (and so the PDF) shows it right under the answer, and the
    TUI's key-points markdown keeps it."""
    from deepresearch.app.tui.render import report_markdown

    question = "In what year did the playwright who wrote The City Heiress die?"
    answer = cite(1, "1689", quote="Aphra Behn died on 16 April 1689.", title="Aphra Behn")
    chain = cite(2, "Aphra Behn", quote="The City Heiress, or Sir Timothy Treat-all · is a comedy by Aphra Behn.",
                 title="The City Heiress", source="https://example.org/heiress")
    point = cite(3, "a Restoration playwright", quote="She was a Restoration playwright.")
    md = render_report(question, "1689", answer, [ReportPoint(text="a Restoration playwright", cite=1)], [point],
                       "", chain_cite=chain)
    assert f"**How:** {chain['quote']} [2] · {answer['quote']} [1]" in md
    view = report_view(run_id="r1", question=question, status="finished", answer="1689", report=md,
                       citations=[answer, chain, point])
    assert [(s.text, s.cite) for s in view.chain] == [(chain["quote"], 2), (answer["quote"], 1)]
    assert [(p.text, p.cite) for p in view.points] == [("a Restoration playwright", 3)]
    html = render_html(view)
    how = ('<p class="chain"><strong>How:</strong> The City Heiress, or Sir Timothy Treat-all · is a comedy by Aphra '
           'Behn. <a class="cite" href="#src-2">[2]</a> · Aphra Behn died on 16 April 1689. '
           '<a class="cite" href="#src-1">[1]</a></p>')
    assert how in html
    answer_at = html.index('<p class="answer">')
    assert html.index(how) == html.index("</p>", answer_at) + len("</p>\n")  # the next line after the answer
    assert f"**How:** {chain['quote']} [2] · {answer['quote']} [1]" in report_markdown(view)
    no_chain = report_view(run_id="r2", question=question, status="finished", answer="1689",
                           report=render_report(question, "1689", answer, [], [], ""), citations=[answer])
    assert no_chain.chain == [] and 'class="chain"' not in render_html(no_chain)


HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


def test_html_escapes_every_untrusted_text():
    answer = cite(1, HOSTILE, title=f"Title {HOSTILE}", quote=f"Quote {HOSTILE} & more",
                  source="javascript:alert(3)")
    md = (f"# Q {HOSTILE}\n\n**Answer:** {HOSTILE} [1]\n\n**How:** Chain {HOSTILE} [2] · x [1]\n\n"
          f"- point {HOSTILE} [1]\n")
    view = report_view(run_id="r<1>", question=f"Q {HOSTILE}", status="finished", answer=HOSTILE, report=md,
                       citations=[answer, cite(2, "x", source="https://example.org/?a=1&b=\"2\"")])
    html = render_html(view)
    page = _Page(html)
    assert set(page.tags) <= {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "p", "strong",
                              "a", "ul", "li", "em", "ol", "blockquote", "footer"}
    assert "script" not in page.tags and "img" not in page.tags
    hrefs = [v for k, v in page.attrs if k == "href"]
    assert all(h.startswith(("#src-", "https://")) for h in hrefs), hrefs  # javascript: is not a link
    assert 'https://example.org/?a=1&b="2"' in hrefs
    assert not any(k.startswith("on") or k == "src" for k, _ in page.attrs)
    text = "".join(page.text)
    assert f"Title {HOSTILE}" in text and f"Quote {HOSTILE} & more" in text and "javascript:alert(3)" in text
    assert f"Chain {HOSTILE}" in text


@pytest.fixture
def stored(tmp_path: Path):
    results = finished_and_stopped(tmp_path / "data")
    return results, clean_env(tmp_path)


def test_pdf_of_a_stored_run_has_the_answer_and_sources(tmp_path: Path, stored):
    results, env = stored
    run = results[0]
    out = tmp_path / "report.pdf"
    proc = cli("runs", "show", run.run_id[:6], "--format", "pdf", "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    text = pdf_text(data)
    assert QUESTION in text and run.answer in text
    for c in (c for c in run.citations if c["verified"]):
        assert c["title"] in text and c["source"] in text and c["quote"] in text


def test_html_md_and_json_of_a_stored_run(tmp_path: Path, stored):
    results, env = stored
    stopped = results[1]
    html_file = tmp_path / "report.html"  # the suffix picks the format
    assert cli("runs", "show", stopped.run_id, "--out", str(html_file), env=env).returncode == 0
    page = _Page(html_file.read_text(encoding="utf-8"))
    text = " ".join("".join(page.text).split())
    assert QUESTION in text and "stopped early" in text and stopped.citations[0]["quote"] in text
    md = cli("runs", "show", stopped.run_id, "--format", "md", env=env)
    assert md.returncode == 0 and md.stdout == stopped.report
    as_json = cli("runs", "show", stopped.run_id, "--format", "json", env=env)
    record = json.loads(as_json.stdout)
    assert record["id"] == stopped.run_id and record["events"] and record["citations"] == stopped.citations
    store = TraceStore(tmp_path / "data" / "traces.db")
    view = view_of_run(store.get_run(stopped.run_id))
    store.close()
    assert render_html(view) == html_file.read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "message"), [
    (("--format", "docx"), "'docx' is not one of md, html, pdf, json"),
    (("--format", "pdf"), "--format pdf needs --out"),
    (("--json", "--format", "html"), "not both"),
    (("--events", "--format", "md"), "--events"),
    (("--out", "{tmp}/missing/r.html"), "does not exist"),
    (("--out", "{tmp}"), "is a directory"),
])
def test_bad_show_export_input(tmp_path: Path, stored, args: tuple[str, ...], message: str):
    results, env = stored
    proc = cli("runs", "show", results[0].run_id, *[a.format(tmp=tmp_path) for a in args], env=env)
    assert proc.returncode == 2, proc.stderr
    assert message in one_error_line(proc)


def test_a_failed_pdf_print_is_one_line_and_keeps_the_old_file(tmp_path: Path, stored):
    results, env = stored
    out = tmp_path / "report.pdf"
    out.write_bytes(b"an earlier export")
    env = {**env, "DEEPRESEARCH_TOOLS__BROWSER__CHROMIUM_PATH": str(tmp_path / "no-chromium")}
    proc = cli("runs", "show", results[0].run_id, "--out", str(out), env=env)
    assert proc.returncode == 1 and "Chromium not found" in one_error_line(proc)
    assert out.read_bytes() == b"an earlier export"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_run_without_a_report_cannot_be_printed(tmp_path: Path):
    store = TraceStore(tmp_path / "data" / "traces.db")
    run_id = store.start_run("q?", {})
    store.finish_run(run_id, "error", None, None, [], {})
    store.close()
    proc = cli("runs", "show", run_id, "--format", "html", env=clean_env(tmp_path))
    assert proc.returncode == 2 and "has no report (error)" in one_error_line(proc)


def _ask_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                     DEEPRESEARCH_MODEL__BASE_URL=base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                     DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")


def test_ask_writes_a_pdf_report(tmp_path: Path):
    out = tmp_path / "answer.pdf"
    with fake_openai_server() as server:
        env = _ask_env(tmp_path, server.base_url)
        proc = cli("ask", "--offline", "--quiet", "--out", str(out), "Who designed the Analytical Engine?", env=env)
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    store = TraceStore(tmp_path / "data" / "traces.db")
    [run] = store.list_runs()
    store.close()
    text = pdf_text(out.read_bytes())
    assert run.answer and "Who designed the Analytical Engine?" in text and run.answer in text
    assert f"run {run.id}" in text


@pytest.mark.parametrize(("args", "message"), [
    (("--format", "rtf"), "is not one of"),
    (("--format", "pdf"), "needs --out"),
    (("--json", "--format", "md"), "not both"),
    (("--out", "{tmp}"), "is a directory"),
])
def test_bad_ask_export_input_fails_before_the_run(tmp_path: Path, args: tuple[str, ...], message: str):
    env = clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__BASE_URL="http://127.0.0.1:9/v1")
    proc = cli("ask", "--offline", "q?", *[a.format(tmp=tmp_path) for a in args], env=env)
    assert proc.returncode == 2, proc.stderr
    assert message in one_error_line(proc)
    assert not (tmp_path / "data" / "traces.db").exists()  # nothing started
