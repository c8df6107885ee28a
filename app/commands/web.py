"""`deepresearch web serve [--index NAME] [--port N]`: serve an index as a local website."""

from __future__ import annotations

import signal

import typer

from ..console import fail, out
from ..settings import get_settings

web_app = typer.Typer(help="The local web: an index served as a website on 127.0.0.1.", no_args_is_help=True,
                      epilog="""Examples:
  deepresearch web serve                        (the default index at http://127.0.0.1:8765)
  deepresearch web serve --index mine --port 0  (any free port; the URL is printed)
Search it from ask: DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL=http://127.0.0.1:8765 deepresearch ask QUESTION""")


@web_app.command("serve")
def serve(
    index: str | None = typer.Option(None, "--index", help="index to serve (default from settings: {settings.index})"),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="TCP port on 127.0.0.1 (0 = any free port)"),
) -> None:
    """Serve SearxNG-compatible /search?q=…&format=json and one page per document until Ctrl-C."""
    from deepresearch.tools.index.registry import IndexRegistry
    from deepresearch.tools.localweb.server import LocalWebServer

    settings = get_settings()
    name = index or settings.index
    registry = IndexRegistry(settings.tools)
    try:
        try:
            local_index = registry.open(name)
        except (LookupError, ValueError) as exc:
            raise fail(str(exc).strip("'\"")) from None
        server = LocalWebServer(local_index, port=port)
        try:
            server.start()
        except OSError as exc:
            raise fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
        # SIGTERM (docker stop, kill, a supervisor) stops it like Ctrl-C does; that also works when the
        # process was started with SIGINT ignored (a background job of a non-interactive shell).
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        out.print(f"serving index {name!r} ({local_index.bm25.count()} documents) at {server.url}", highlight=False)
        out.print(f"search it with: DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL={server.url}  (Ctrl-C to stop)",
                  highlight=False)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            out.print("stopped")
    finally:
        registry.close()


def register(app: typer.Typer) -> None:
    app.add_typer(web_app, name="web")
