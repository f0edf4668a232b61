"""`codeweaver serve`: the HTTP API, the web page, the MCP endpoint and (optionally) the
Gradio app."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from codeweaver.config import Settings


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    model: Annotated[str | None, typer.Option("--model", "-m", help="provider:model")] = None,
    gradio: Annotated[
        bool, typer.Option("--gradio", help="Also mount the Gradio app at /gradio.")
    ] = False,
) -> None:
    """Serve the API (docs at /docs), the web page (at /) and MCP (at /mcp)."""
    from codeweaver.api.auth import (
        ExposedWithoutTokenError,
        TokenFileError,
        TokenTable,
        check_binding,
    )
    from codeweaver.api.rate_limit import ProxySettingError
    from codeweaver.cli.common import BindingError, bind
    from codeweaver.cli.common import fail as _fail
    from codeweaver.cli.common import known_errors as _known_errors
    from codeweaver.cli.common import settings as _settings

    try:
        settings = _settings(model=model)
        tokens = TokenTable.from_settings(settings)
        check_binding(host, tokens)  # never listen where it must not, even for a moment
        _thread_store_opens(settings)
        # Then the port: a busy one fails now, not after the app is built.
        sock = bind(host, port)
        import uvicorn

        from codeweaver.api.app import create_app
        from codeweaver.mcp_server.http import McpExtension

        # MCP (streamable HTTP) at /mcp, behind the same Host check and tokens as the API.
        app = create_app(settings, bind_host=host, extensions=[McpExtension()])
        if gradio:
            from codeweaver.ui.gradio_app import GradioMissingError, mount_gradio

            try:
                app = mount_gradio(app)  # behind the same tokens and users as the API
            except GradioMissingError as exc:
                _fail(str(exc))
        _one_blas_thread()
        # Client addresses come from the connection; X-Forwarded-For is weighed by the
        # app against CODEWEAVER_TRUSTED_PROXIES, never rewritten by uvicorn.
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="info",
            timeout_graceful_shutdown=5,
            proxy_headers=False,
        )
        uvicorn.Server(config).run(sockets=[sock])
    except BindingError as exc:
        _fail(str(exc))
    except (ExposedWithoutTokenError, TokenFileError, ProxySettingError) as exc:
        _fail(str(exc))
    except _known_errors() as exc:
        _fail(str(exc))


def _thread_store_opens(settings: Settings) -> None:
    """Fail with the reason, in one line, when the SQLite thread store cannot even be
    opened (a read-only data folder without its database yet): the server could not
    start, and its start-up would end in a traceback. A store that opens but is damaged
    or read-only is reported by health instead, and the server still starts."""
    from codeweaver.cli.common import fail
    from codeweaver.memory.store_check import sqlite_open_problem

    if settings.database_url is not None:
        return  # PostgreSQL: checked at start, reported by health
    path = settings.checkpoint_path
    if path.exists():
        return
    if (problem := sqlite_open_problem(path)) is not None:
        fail(problem.detail)


def _one_blas_thread() -> None:
    """One OpenBLAS thread per server process.

    A server computes many small matrix products at once (one query's embedding each);
    OpenBLAS threads only contend for the cores, with each other and with the other
    replicas on the machine. Measured with `codeweaver_eval.bench.replicas` (installed
    docs, 60 chats): two replicas went from 0.5x to 1.26x the throughput of one.
    """
    import numpy  # noqa: F401  loads OpenBLAS, so that the limit reaches it
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
