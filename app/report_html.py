"""A report as one self-contained HTML page: the answer (with a multi-hop answer's chain of cited steps), key points
with their citations (or an open question's sections, each sentence with its citations, and the sentences the check
removed), the sources with the quotes that were checked. No script, no external resource; every piece of text is escaped
(questions, quotes, titles and URLs come from users and web pages: untrusted).
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlsplit

from deepresearch.agent.graph.report.render import fallback_intro

from deepresearch import __version__

from .report_view import ReportView

STYLE = """
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;margin:0;background:#fff}
main{max-width:46rem;margin:2rem auto;padding:0 1.25rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .25rem}
h2{font-size:1.05rem;text-transform:uppercase;letter-spacing:.04em;color:#555;margin:2rem 0 .5rem}
.meta{color:#666;font-size:.85rem;margin:0 0 1.5rem}
.answer{font-size:1.25rem;background:#f3f6fb;border-left:4px solid #2f6fdf;padding:.75rem 1rem;margin:0}
.chain{color:#333;font-size:.95rem;margin:.5rem 0 0;padding:0 1rem}
.note{background:#fff7e0;border-left:4px solid #d9a400;padding:.5rem 1rem;margin:1rem 0}
a.cite{text-decoration:none;font-size:.85em;vertical-align:super}
.removed{color:#777}.removed em{font-size:.85em}
.intro{color:#555;font-size:.9rem;font-style:italic}
h2.section{text-transform:none;letter-spacing:0;color:#1d1d1f;font-size:1.15rem}
ol.sources{padding-left:0;list-style:none}
ol.sources li{margin:0 0 1rem;break-inside:avoid}
.src-title{font-weight:600;margin:0}
.src-url{font-size:.8rem;color:#555;margin:0;overflow-wrap:anywhere}
blockquote{margin:.35rem 0 0;padding:.25rem .9rem;border-left:3px solid #ccc;color:#333;font-style:italic}
footer{margin:2.5rem 0 2rem;color:#888;font-size:.8rem}
@media print{main{margin:0 auto}a{color:inherit}}
"""
# Defence in depth: even if something slipped through escaping, the page may load and run nothing.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'"


def _cite(n: int | None) -> str:
    return f' <a class="cite" href="#src-{n}">[{n}]</a>' if n is not None else ""


def _url(url: str) -> str:
    """A link only for http(s) URLs; anything else (local://, javascript:) is shown as text."""
    if urlsplit(url).scheme.lower() in ("http", "https"):
        return f'<a href="{escape(url, quote=True)}" rel="noreferrer noopener">{escape(url)}</a>'
    return escape(url)


def _sections(view: ReportView) -> list[str]:
    """An open question's sections: written sentences as a paragraph, an extractive report's quotes as a list."""
    e = escape
    intro = ("Written by the model from the findings it was shown; every sentence was checked against the quotes it "
             "cites, and one they do not support is removed." if view.style == "written" else
             "Quotes from the sources read, grouped by what was searched; each was found in its source and is about "
             "the question or its search.")
    if view.fallback:  # a written report that gave way to the quotes: why
        intro = fallback_intro(view.fallback).strip("_")  # the markdown's intro line, without its emphasis
    if view.dropped:
        what = "sentence(s) removed" if view.style == "written" else "quote(s) left out"
        intro += f" {view.dropped} {what} by the check."
    parts = [f'<p class="intro">{e(intro)}</p>']
    for section in view.sections:
        parts.append(f'<h2 class="section">{e(section.title)}</h2>')
        shown = [s for s in section.sentences if s.supported]
        if not shown:
            parts.append('<p class="removed"><em>(every sentence of this section was removed by the check)</em></p>')
        elif view.style == "written":
            parts.append("<p>" + " ".join(f"{e(s.text)}{''.join(_cite(n) for n in s.cites)}" for s in shown) + "</p>")
        else:
            parts.append("<ul>" + "".join(f"<li>{e(s.text)}{''.join(_cite(n) for n in s.cites)}</li>" for s in shown)
                         + "</ul>")
    if view.dropped_sentences:
        parts.append("<h2>Removed by the check</h2><ul>")
        parts += [f'<li class="removed">{e(s.text)} <em>(unsupported: {e(s.reason or "")})</em></li>'
                  for s in view.dropped_sentences]
        parts.append("</ul>")
    return parts


def render_html(view: ReportView) -> str:
    e = escape
    when = f" · {view.created_at:%Y-%m-%d %H:%M} UTC" if view.created_at else ""
    parts = [
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(view.question)}</title><style>{STYLE}</style></head><body><main>",
        f"<h1>{e(view.question)}</h1>",
        f'<p class="meta">run {e(view.run_id)} · {e(view.status)}{when} · {len(view.sources)} verified source(s)'
        + (f" · {view.removed} citation(s) removed by the check" if view.removed else "") + "</p>",
    ]
    if view.answer or view.style == "answer":  # an open question's report has no answer line of its own
        parts += ['<h2>Answer</h2>',
                  f'<p class="answer"><strong>{e(view.answer or "no answer")}</strong>{_cite(view.answer_cite)}</p>']
        if view.chain:  # a multi-hop answer: the cited steps that lead to it, right under it
            parts.append('<p class="chain"><strong>How:</strong> '
                         + " · ".join(f"{e(step.text)}{_cite(step.cite)}" for step in view.chain) + "</p>")
    if view.note:
        parts.append(f'<p class="note">{e(view.note)}</p>')
    if view.style != "answer":
        parts += _sections(view)
    if view.points:
        parts.append("<h2>Key points</h2><ul>")
        for p in view.points:
            if p.removed is not None:
                parts.append(f'<li class="removed">{e(p.text)} <em>(unsupported: citation removed — '
                             f"{e(p.removed)})</em></li>")
            else:
                parts.append(f"<li>{e(p.text)}{_cite(p.cite)}</li>")
        parts.append("</ul>")
    if view.sources:
        parts.append('<h2>Sources</h2><ol class="sources">')
        for s in view.sources:
            parts.append(
                f'<li id="src-{s.n}"><p class="src-title">[{s.n}] {e(s.title or s.url)}</p>'
                f'<p class="src-url">{_url(s.url)}</p><blockquote>{e(s.quote)}</blockquote></li>'
            )
        parts.append("</ol>")
    parts.append(f"<footer>Every quote above was checked against the fetched text of its source. "
                 f"deepresearch {e(__version__)}</footer></main></body></html>")
    return "\n".join(parts) + "\n"
