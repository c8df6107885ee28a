"""`--format md|html|pdf|json` and `--out FILE` for commands that give a report (`ask`, `runs show`).

The format is the one named, else the one `--out`'s suffix names (.md .html .pdf .json), else markdown.
The file is written by file_output.write_output: a failed export never leaves half a file.
"""

from __future__ import annotations

from pathlib import Path

from deepresearch.tools.config import BrowserSettings

from .report_html import render_html
from .report_view import ReportView

FORMATS = ("md", "html", "pdf", "json")
SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf", ".json": "json"}
FORMAT_HELP = "md | html | pdf | json (default: from --out's suffix, else md); pdf needs --out"


class ExportInputError(ValueError):
    """A bad --format / --out combination (exit 2, before any work is done)."""


def choose_format(fmt: str | None, out: Path | None, *, as_json: bool = False) -> str | None:
    """The export format, or None for the command's usual terminal view."""
    if fmt is not None:
        chosen = fmt.strip().lower()
        if chosen not in FORMATS:
            raise ExportInputError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
        if as_json and chosen != "json":
            raise ExportInputError(f"give --json or --format {chosen}, not both")
    elif as_json:
        chosen = "json"
    elif out is not None:
        chosen = SUFFIXES.get(out.suffix.lower(), "md")
    else:
        return None
    if chosen == "pdf" and out is None:
        raise ExportInputError("--format pdf needs --out FILE.pdf (a PDF is not printed to the terminal)")
    return chosen


def check_out(out: Path | None) -> None:
    if out is None:
        return
    if not out.parent.is_dir():
        raise ExportInputError(f"--out: directory {out.parent} does not exist")
    if out.is_dir():
        raise ExportInputError(f"--out: {out} is a directory; give a file name")


def render_report(view: ReportView, fmt: str, browser: BrowserSettings | None = None) -> bytes:
    """md, html or pdf bytes of a report (json is each command's own record)."""
    if fmt == "md":
        return view.markdown.encode("utf-8")
    html = render_html(view)
    if fmt == "html":
        return html.encode("utf-8")
    if fmt == "pdf":
        from .report_pdf import html_to_pdf

        browser = browser or BrowserSettings()
        return html_to_pdf(html, chromium=browser.chromium_path, args=list(browser.chromium_args))
    raise ValueError(f"render_report cannot write {fmt}")
