"""PDF to text in a child process, so a PDF that is slow to parse cannot hold its caller past a deadline.

pypdf is pure Python: a 23 KB PDF of many small text operators took 41.6 s, and a thread cannot be stopped.
The caller bounds the await (e.g. `asyncio.timeout_at`); when it is cancelled the child is killed at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from deepresearch.tools.extract import pdf
from deepresearch.tools.extract.pdf import PdfError

_SCRIPT = str(Path(pdf.__file__))


async def pdf_to_text_in_process(data: bytes, *, max_chars: int | None = None) -> tuple[str, str]:
    """(title, text) as pdf_to_text gives it; raises PdfError when unreadable. Cancelling kills the parser."""
    # -I: the script's folder (tools/extract, which has an html.py) must not shadow the standard library
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", _SCRIPT, "-" if max_chars is None else str(max_chars),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await proc.communicate(data)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise PdfError(f"not a readable PDF (the parser failed: {last[:200]})")
    answer = json.loads(out)
    if "error" in answer:
        raise PdfError(answer["error"])
    return answer["title"], answer["text"]
