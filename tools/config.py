"""Settings the tools layer defines for itself; app/ fills them in and passes them down."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class ToolSettings(BaseModel):
    """Root of the tools settings; one sub-model per tool."""

    model_config = ConfigDict(extra="forbid")

    data_dir: Path = Field(Path("."), description="filled in by app/ from the global data dir")
