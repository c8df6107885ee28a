"""`deepresearch adapters list|use|rollback`: which LoRA adapter answers, and going back."""

from __future__ import annotations

import asyncio

import typer
from deepresearch.app.console import fail, out
from deepresearch.app.settings import get_settings

adapters_app = typer.Typer(
    help="LoRA adapters trained by `deepresearch train`: list, serve one, roll back; average, cut, scale, measure.",
    no_args_is_help=True,
    epilog="""Examples:
  deepresearch adapters list                    (* marks the one that answers)
  deepresearch adapters use grpo-0003
  deepresearch adapters use base                (answer with the plain model)
  deepresearch adapters rollback                (serve again what was served before)
  deepresearch adapters soup --out /tmp/soup /tmp/seed0/adapter /tmp/seed1/adapter /tmp/seed2/adapter
  deepresearch adapters compress --rank 32 --dtype bf16 --out /tmp/small /tmp/soup
  deepresearch adapters measure /tmp/small --bridges
`deepresearch train` publishes adapters here; a new data directory starts with the shipped starter adapter.""",
)


def _registry():
    from deepresearch.app.runtime import adapter_registry

    return adapter_registry(get_settings())  # a fresh data directory gets the starter adapter first


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@adapters_app.command("list")
def list_adapters() -> None:
    """One adapter a line: name, created, step, mean train reward, dev gate result; * = served."""
    from deepresearch.train.adapters.registry import RegistryError

    try:
        items = _registry().list()
    except RegistryError as exc:
        raise fail(str(exc)) from None
    if not items:
        out.print("no adapters yet — train one with: deepresearch train --questions FILE --corpus FILE")
        return
    for a in items:
        gate = a.eval or {}
        verdict = "" if not gate else (
            f"dev {gate.get('metric', '')} {_fmt(gate.get('candidate_score'))} vs {_fmt(gate.get('baseline_score'))} "
            + ("passed" if gate.get("passed") else "regressed"))
        mark = "*" if a.current else " "
        out.print(f"{mark} {a.name}  {a.created_at or '-'}  step {a.step if a.step is not None else '-'}  "
                  f"reward {_fmt(a.reward_mean)}  {verdict}".rstrip(), markup=False, highlight=False)
        if a.origin:
            out.print(f"    {a.origin}", markup=False, highlight=False)


async def _load_into_server(name: str | None) -> str:
    """With a model server, load the adapter there now; the embedded engine loads it at start-up."""
    settings = get_settings()
    if settings.model.backend != "openai" or name is None:
        return ""
    from deepresearch.agent.model.base import ModelError
    from deepresearch.agent.trace.redact import redact_urls
    from deepresearch.app.runtime import build_model_from
    from deepresearch.train.adapters.publish import serve_adapter

    model = build_model_from(settings.model_copy(update={"model": settings.model.model_copy(update={"adapter": None})}))
    try:
        await serve_adapter(name, _registry(), [model])
        return f" (loaded into {redact_urls(settings.model.base_url or '')})"
    except ModelError as exc:
        raise fail(f"model server: {exc}") from None
    finally:
        await model.close()


@adapters_app.command("use")
def use(name: str = typer.Argument(..., help="adapter name (see `deepresearch adapters list`), or 'base'")) -> None:
    """Serve NAME from now on ('base' = the base model, no adapter)."""
    from deepresearch.agent.model.policy import AdapterMode
    from deepresearch.train.adapters.registry import RegistryError

    target = None if name == AdapterMode.BASE else name
    try:
        _registry().set_current(target, action="use")
    except RegistryError as exc:
        raise fail(str(exc)) from None
    note = asyncio.run(_load_into_server(target))
    out.print(f"serving {target or 'the base model'}{note}")


@adapters_app.command("rollback")
def rollback() -> None:
    """Serve again what was served before the current adapter."""
    from deepresearch.train.adapters.registry import RegistryError

    try:
        state = _registry().rollback()
    except RegistryError as exc:
        raise fail(str(exc)) from None
    note = asyncio.run(_load_into_server(state.current))
    out.print(f"rolled back: serving {state.current or 'the base model'}{note}")


def register(app: typer.Typer) -> None:
    from .adapter_soup import COMPRESS_EXAMPLES, SCALE_EXAMPLES, SOUP_EXAMPLES, compress, scale, soup
    from .train_choices import MEASURE_EXAMPLES, measure

    adapters_app.command("soup", epilog=SOUP_EXAMPLES)(soup)
    adapters_app.command("compress", epilog=COMPRESS_EXAMPLES)(compress)
    adapters_app.command("scale", epilog=SCALE_EXAMPLES)(scale)
    adapters_app.command("measure", epilog=MEASURE_EXAMPLES)(measure)
    app.add_typer(adapters_app, name="adapters")
