"""The starter adapter: a LoRA adapter trained here and shipped inside the package, so a new user's first
`ask` already answers with the improved policy (issue 13, item 4).

It lives in the package's data folder `starter_adapter/` (peft files + metadata.json, whose `origin` and
`eval` say how it was made and what it measured). On first use of a data directory, one with no adapter
registry yet, it is copied into the adapters folder under its name and made current, the registry's log
saying "starter". From then on it is an adapter like any other: `adapters list` shows it, `adapters use
base` returns to the plain model (and stays there: the registry now exists), `rollback` works. A data
directory that already has a registry is never touched, so nobody's choice is overridden.

It was trained on the embedded model's weights, so it is installed only when the configured model is that
model (settings: model.name) and model.starter_adapter is on.
"""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from .registry import REGISTRY_FILE, AdapterRegistry

# The name it is installed under: what it is (answer and bridge choices), that it ships, and its version.
STARTER_NAME = "starter-answer-bridge-1"


def packaged_starter() -> Path | None:
    """The packaged adapter's folder, or None when this install has none (e.g. a trimmed build)."""
    folder = Path(str(resources.files("deepresearch.train.adapters").joinpath("starter_adapter")))
    return folder if (folder / "adapter_config.json").is_file() else None


def install_starter(adapters_dir: Path, source: Path | None = None) -> str | None:
    """On a data directory with no registry yet, install the starter adapter and serve it; return its name.
    Otherwise (a registry exists, or no adapter is packaged) change nothing and return None."""
    source = source if source is not None else packaged_starter()
    adapters_dir = Path(adapters_dir)
    if source is None or (adapters_dir / REGISTRY_FILE).is_file():
        return None
    registry = AdapterRegistry(adapters_dir)
    target = registry.path(STARTER_NAME)
    if not registry.exists(STARTER_NAME):
        adapters_dir.mkdir(parents=True, exist_ok=True)
        # Copied beside the target and renamed into place: a crash or a second process starting at the same
        # moment never leaves a half-copied adapter under the name.
        staging = Path(tempfile.mkdtemp(prefix=f".{STARTER_NAME}-", dir=adapters_dir))
        try:
            shutil.copytree(source, staging, dirs_exist_ok=True)
            try:
                staging.rename(target)
            except OSError:
                if not registry.exists(STARTER_NAME):  # not another process's copy that won the race
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if not (adapters_dir / REGISTRY_FILE).is_file():
        registry.set_current(STARTER_NAME, action="starter")
    return STARTER_NAME

