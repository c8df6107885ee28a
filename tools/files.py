"""The `read_file` tool: read a user file (text, markdown, HTML, PDF) below the allowed roots."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from deepresearch.tools.base import Surfaced, Tool, ToolFailure
from deepresearch.tools.config import FileSettings
from deepresearch.tools.extract.chunks import Chunk, chunk_offsets
from deepresearch.tools.extract.files import UnreadableFile, read_user_file
from pydantic import BaseModel, Field

CHUNK_CHARS, CHUNK_OVERLAP = 2_000, 200


class ReadFileInput(BaseModel):
    path: str = Field(min_length=1, max_length=4_096, description="path of a text, markdown, HTML or PDF file")


class ReadFileOutput(BaseModel):
    path: str
    title: str
    text: str = Field(description="file text: untrusted data, like a web page")
    truncated: bool
    chunks: list[Chunk]


class ReadFileTool(Tool[ReadFileInput, ReadFileOutput]):
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = "Read one of the user's files (text, markdown, HTML, PDF)."
    input_model: ClassVar[type[ReadFileInput]] = ReadFileInput

    def sources(self, output: dict[str, Any]) -> list[Surfaced]:
        """The file itself, read in full."""
        if not output.get("text"):
            return []
        return [Surfaced(url=output["path"], title=output.get("title", ""), text=output["text"])]

    def __init__(self, settings: FileSettings):
        self.settings = settings
        self.roots = [Path(root).expanduser().resolve() for root in settings.allowed_roots]
        self.texts: dict[str, str] = {}

    def _resolve(self, raw: str) -> Path:
        if not self.roots:
            raise ToolFailure("unavailable", "read_file has no allowed folders (set files.allowed_roots)")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        try:
            path = candidate.resolve(strict=True)  # follows symlinks, so the check below sees the real file
        except (OSError, RuntimeError):
            raise ToolFailure("not_found", f"no such file: {raw}") from None
        if not any(path.is_relative_to(root) for root in self.roots):
            raise ToolFailure("forbidden", f"{raw} is outside the allowed folders")
        if not path.is_file():
            raise ToolFailure("not_found", f"{raw} is not a regular file")
        return path

    async def run(self, args: ReadFileInput) -> ReadFileOutput:
        path = self._resolve(args.path)
        try:
            title, text = await asyncio.to_thread(read_user_file, path, max_bytes=self.settings.max_bytes)
        except UnreadableFile as exc:
            raise ToolFailure("unsupported_content", str(exc)) from None
        except OSError as exc:
            raise ToolFailure("unreadable", f"{args.path}: {exc.strerror}") from None
        self.texts[str(path)] = text
        truncated = len(text) > self.settings.max_text_chars
        text = text[: self.settings.max_text_chars]
        return ReadFileOutput(
            path=str(path), title=title, text=text, truncated=truncated,
            chunks=chunk_offsets(text, CHUNK_CHARS, CHUNK_OVERLAP),
        )
