"""deepresearch: a deep-research agent that improves itself from its own use."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("deepresearch")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+local"
