"""`deepresearch adapters soup|compress|scale`: new adapters from trained ones (train/adapters/soup.py). The
starter adapter is three `train choices` adapters souped and compressed to rank 32 in bf16."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from deepresearch.app.console import fail, say

SOUP_EXAMPLES = """Examples:
  deepresearch adapters soup --out /tmp/soup /tmp/seed0/adapter /tmp/seed1/adapter /tmp/seed2/adapter
  deepresearch adapters soup --out /tmp/soup /tmp/a:0.5 /tmp/b /tmp/c          (weights 1/2, 1/4, 1/4)
The parts need the same scaling alpha / r, target modules and roles; their ranks may differ."""

COMPRESS_EXAMPLES = """Examples:
  deepresearch adapters compress --rank 32 --dtype bf16 --out /tmp/starter /tmp/soup   (how the starter was cut)
It prints the share of the weight change's squared norm kept, module type by module type."""

SCALE_EXAMPLES = """Examples:
  deepresearch adapters scale --factor 1.5 --out /tmp/starter-x1.5 /tmp/starter
Only alpha changes: the factors and the rank stay; the copy's metadata names its source and factor."""


@contextmanager
def _soup_errors() -> Iterator[None]:
    """A SoupError (an adapter that cannot be averaged, cut or scaled as asked) as one line and exit 2."""
    from deepresearch.train.adapters.soup import SoupError

    try:
        yield
    except SoupError as exc:
        raise fail(str(exc)) from None


def _exists(*paths: Path) -> None:
    for path in paths:
        if not path.is_dir():
            raise fail(f"{path}: no such adapter folder")


def soup(
    parts: list[str] = typer.Argument(..., metavar="PART", help="two or more adapter folders, each PATH or "
                                      "PATH:WEIGHT, trained for the same roles; a part without a weight shares "
                                      "what the weighted ones leave (default: equal weights)"),
    out_dir: Path = typer.Option(..., "--out", help="the averaged adapter's folder"),
) -> None:
    """Average adapters: one adapter whose weight change is the weighted mean of theirs (rank Σ r_i)."""
    from deepresearch.train.adapters.soup import build_soup, part_weights

    if len(parts) < 2:
        raise fail("a soup needs at least two adapters")
    with _soup_errors():
        weighted = part_weights(parts)
        _exists(*(path for path, _ in weighted))
        say(build_soup(out_dir, weighted))


def compress(
    adapter: Path = typer.Argument(..., help="the adapter folder to cut"),
    out_dir: Path = typer.Option(..., "--out", help="the cut adapter's folder"),
    rank: int = typer.Option(..., "--rank", help="the rank to keep (below the adapter's)"),
    dtype: str = typer.Option("fp32", "--dtype", help="fp32 | bf16 (half the bytes)"),
) -> None:
    """Cut an adapter to a lower rank: per module the best rank-k approximation of its weight change."""
    from deepresearch.train.adapters.soup import compress as cut

    _exists(adapter)
    with _soup_errors():
        say(cut(adapter, out_dir, rank, dtype))


def scale(
    adapter: Path = typer.Argument(..., help="the adapter folder to scale"),
    out_dir: Path = typer.Option(..., "--out", help="the scaled copy's folder"),
    factor: float = typer.Option(..., "--factor", help="its weight change is the adapter's times this (> 0)"),
) -> None:
    """Copy an adapter with its weight change scaled (only alpha changes)."""
    from deepresearch.train.adapters.soup import scale as scaled

    _exists(adapter)
    with _soup_errors():
        say(scaled(adapter, out_dir, factor))
