"""The `python` tool: run model-written code in the bubblewrap sandbox and report what happened."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import stat
from pathlib import Path
from typing import Any, ClassVar, Literal

from deepresearch.tools.base import Tool, ToolFailure
from deepresearch.tools.config import SandboxSettings
from deepresearch.tools.sandbox.runner import SCRIPT, SandboxUnavailable, check_available, limits_for, run_python
from pydantic import BaseModel, Field

LIMIT_MESSAGES = {
    "wall_time": "killed: wall-clock limit of {wall:g}s reached",
    "cpu_time": "killed: CPU time limit of {cpu}s reached",
    "output": "killed: output limit of {out} bytes exceeded",
    "disk": "disk limit reached: /work holds at most {disk} MB in {files} files and folders",
}


class PythonInput(BaseModel):
    code: str = Field(min_length=1, max_length=100_000, description="Python 3 source to run")


class WrittenFile(BaseModel):
    name: str
    size: int
    encoding: Literal["utf-8", "base64"] | None = Field(None, description="None: too large, listed only")
    content: str | None = None


class PythonOutput(BaseModel):
    stdout: str
    stderr: str
    exit_code: int | None
    ok: bool
    limit: Literal["wall_time", "cpu_time", "output", "disk", "memory"] | None = Field(
        None, description="the limit that ended the run, if one did"
    )
    error: str | None = Field(None, description="one line on why the run failed, when it did")
    files: list[WrittenFile]
    duration_s: float


def _collect_files(workdir: Path, settings: SandboxSettings) -> list[WrittenFile]:
    """Regular files the code wrote, as workfs.py copied them out of the sandbox (larger ones as empty files of
    their size). Symlinks are never followed: the code could point one at a host file."""
    found: list[WrittenFile] = []
    for folder, dirs, files in os.walk(workdir, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            relative = path.relative_to(workdir).as_posix()
            if relative == SCRIPT:
                continue
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            entry = WrittenFile(name=relative, size=info.st_size)
            if info.st_size <= settings.max_file_bytes:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as handle:
                    data = handle.read(settings.max_file_bytes + 1)
                try:
                    entry.content, entry.encoding = data.decode("utf-8"), "utf-8"
                except UnicodeDecodeError:
                    entry.content, entry.encoding = base64.b64encode(data).decode(), "base64"
            found.append(entry)
            if len(found) >= settings.max_files:
                return found
    return found


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class PythonTool(Tool[PythonInput, PythonOutput]):
    name: ClassVar[str] = "python"
    description: ClassVar[str] = "Run Python 3 (numpy, pandas, matplotlib) in a sandbox with no network."
    input_model: ClassVar[type[PythonInput]] = PythonInput
    plannable: ClassVar[bool] = True

    def observe(self, value: str, output: dict[str, Any]) -> str:
        # The code's output can echo what it read (pages the model copied into it): the executor fences it.
        return f"{self.name} → exit {output.get('exit_code')}, stdout:\n" + str(output.get("stdout", ""))[:300]

    def __init__(self, settings: SandboxSettings):
        self.settings = settings
        self.limits = limits_for(settings)

    def unavailable_reason(self) -> str | None:
        try:
            check_available(self.settings)
        except SandboxUnavailable as exc:
            return str(exc)
        return None

    async def run(self, args: PythonInput) -> PythonOutput:
        try:
            raw = await run_python(args.code, self.settings, self.limits)
        except SandboxUnavailable as exc:
            raise ToolFailure("unavailable", str(exc)) from None
        try:
            files = await asyncio.to_thread(_collect_files, raw.files_dir, self.settings)
        finally:
            shutil.rmtree(raw.workdir, ignore_errors=True)
        stderr = _decode(raw.stderr)
        limit = raw.limit
        if limit is None and raw.exit_code not in (0, None) and stderr.rstrip().endswith("MemoryError"):
            limit = "memory"
        error = None
        if limit == "memory":
            error = f"MemoryError: memory limit of {self.settings.memory_mb} MB reached"
        elif limit is not None:
            error = LIMIT_MESSAGES[limit].format(
                wall=self.settings.wall_timeout_s, cpu=self.settings.cpu_s, out=self.settings.max_output_bytes,
                disk=self.settings.max_disk_mb, files=self.settings.max_work_files,
            )
        elif raw.exit_code != 0:
            last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
            error = f"exit status {raw.exit_code}: {last}"[:500]
        return PythonOutput(
            stdout=_decode(raw.stdout), stderr=stderr, exit_code=raw.exit_code, ok=raw.exit_code == 0 and limit is None,
            limit=limit, error=error, files=files, duration_s=raw.duration_s,
        )
