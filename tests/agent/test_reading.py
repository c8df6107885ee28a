"""The run's sentences: a fetched page's heading stays out of its first sentence."""

from __future__ import annotations

from deepresearch.agent.graph.reading import read_sentences, without_heading
from deepresearch.agent.graph.state import SourceRead
from deepresearch.agent.reader.answers.candidates import rank_candidates
from deepresearch.tools.extract.html import extract_html
from deepresearch.tools.index.store import StoredDoc
from deepresearch.tools.localweb.pages import document_page

LEAD = ("Sir Philip Anthony Hopkins (born 31 December 1937) is a Welsh film, stage, and television actor.\n"
        "He was knighted in 1993.")


def page_text(title: str, text: str) -> str:
    """The text the browser tool gets for a local web server page: trafilatura over the real HTML."""
    doc = StoredDoc(id="d1", title=title, text=text, source="test", content_hash="h")
    return extract_html(document_page(doc).decode(), "http://x/doc/d1").text


def source(title: str) -> SourceRead:
    return SourceRead(step_id=1, url="http://x/doc/d1", title=title, doc_id="d1", rank=0, hop=False)


def test_a_pages_heading_does_not_run_into_its_lead_sentence():
    text = page_text("Anthony Hopkins", LEAD)
    assert text.startswith("Anthony Hopkins\nSir Philip")  # what the fix is for
    sents = read_sentences([source("Anthony Hopkins")], lambda url: text)
    assert sents[0].text.startswith("Sir Philip Anthony Hopkins (born 31 December 1937)")
    assert sents[0].title == "Anthony Hopkins" and sents[0].position == 0
    best = rank_candidates("Which Welsh actor was born on 31 December 1937?", sents, k=5, kind="name")
    assert "Anthony Hopkins Sir Philip Anthony Hopkins" not in {c.text for c in best}
    assert "Sir Philip Anthony Hopkins" in {c.text for c in best}


def test_a_first_line_that_is_not_the_title_is_kept():
    text = "Hopkins was born in Margam.\nHe was knighted in 1993."
    assert without_heading(text, "Anthony Hopkins") == text
    assert without_heading("Anthony Hopkins", "Anthony Hopkins") == "Anthony Hopkins"  # no line after it
    assert without_heading("ANTHONY  HOPKINS\nBorn in Margam.", "Anthony Hopkins") == "Born in Margam."
    assert without_heading(text, "") == text
