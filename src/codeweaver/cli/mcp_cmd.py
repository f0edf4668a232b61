"""`codeweaver mcp`: serve the MCP tools over stdio for a coding agent (registered on the
command group by `codeweaver.cli.app`)."""

from __future__ import annotations

from typing import Annotated

import typer


def mcp(
    model: Annotated[str | None, typer.Option("--model", "-m", help="provider:model")] = None,
) -> None:
    """Serve CodeWeaver to a coding agent over MCP (stdio): `ask` and the search tools.

    Register it with your agent, e.g. `claude mcp add codeweaver -- codeweaver mcp`.
    Standard output carries the protocol; logs go to standard error.
    """
    from codeweaver.cli.common import fail as _fail
    from codeweaver.cli.common import known_errors as _known_errors
    from codeweaver.cli.common import settings as _settings

    try:
        settings = _settings(model=model)
        # The SDK is imported here, not at the top: `codeweaver --help` stays fast.
        from codeweaver.mcp_server.stdio import run_stdio

        run_stdio(settings)
    except KeyboardInterrupt:
        pass
    except _known_errors() as exc:
        _fail(str(exc))
