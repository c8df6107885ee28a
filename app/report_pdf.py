"""Print an HTML report to PDF with the Chromium already installed for the browser tool (via Playwright).

Chromium gets no network (every request is refused and its resolver finds nothing) and no JavaScript:
the page is self-contained, and what it shows is untrusted text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from deepresearch.tools.config import CHROMIUM_FLAGS

PAGE = {"format": "A4", "print_background": True,
        "margin": {"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"}}


class PdfError(RuntimeError):
    """Chromium could not print the report (missing, failed to start, timed out)."""


async def print_pdf(html: str, *, chromium: Path = Path("/usr/bin/chromium"), args: list[str] | None = None,
                    timeout_s: float = 60.0) -> bytes:
    if not chromium.is_file():
        raise PdfError(f"Chromium not found at {chromium} (sudo apt-get install -y chromium, "
                       "or set tools.browser.chromium_path)")
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    flags = [*(args if args is not None else CHROMIUM_FLAGS), "--host-resolver-rules=MAP * ~NOTFOUND"]
    try:
        async with asyncio.timeout(timeout_s), async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=flags, headless=True)
            try:
                context = await browser.new_context(java_script_enabled=False, offline=True,
                                                    service_workers="block", accept_downloads=False)
                await context.route("**/*", lambda route: route.abort("blockedbyclient"))
                page = await context.new_page()
                await page.set_content(html, wait_until="load")
                return await page.pdf(**PAGE)
            finally:
                await browser.close()
    except TimeoutError:
        raise PdfError(f"Chromium did not print the report within {timeout_s:.0f} s") from None
    except PlaywrightError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise PdfError(f"Chromium could not print the report: {first}") from None


def html_to_pdf(html: str, *, chromium: Path = Path("/usr/bin/chromium"), args: list[str] | None = None,
                timeout_s: float = 60.0) -> bytes:
    """`print_pdf` for callers outside an event loop (the CLI)."""
    return asyncio.run(print_pdf(html, chromium=chromium, args=args, timeout_s=timeout_s))
