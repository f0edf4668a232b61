"""The service under test: `running_app` serves it on a loopback port (the e2e tier),
`app_client` drives the same app in process (the unit tier); `free_port` is for servers
started as processes."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.testclient import TestClient

from codeweaver.agent.deps import Deps
from codeweaver.api.app import create_app
from codeweaver_eval.serving import serve_in_thread

# A local client as the app sees it: loopback to loopback, so the Host check and the
# per-address budgets behave as for a browser on the same machine.
LOCAL_BASE = "http://127.0.0.1"
LOCAL_CLIENT = ("127.0.0.1", 50000)
START_SECONDS = 60.0


def _app(target: Any, options: dict[str, Any]) -> Any:
    """`create_app(deps.settings, deps=deps, **options)` for Deps, else the app as given."""
    if isinstance(target, Deps):
        return create_app(target.settings, deps=target, **options)
    if options:
        raise TypeError("options go to create_app: pass Deps, or build the app yourself")
    return target


@contextmanager
def running_app(target: Any, **options: Any) -> Iterator[str]:
    """The app of `target` (Deps, or any ASGI app already built) under uvicorn on a free
    loopback port until the block ends; yields its base URL."""
    with serve_in_thread(_app(target, options), timeout=START_SECONDS) as url:
        yield url


@contextmanager
def app_client(target: Any, **options: Any) -> Iterator[TestClient]:
    """The app of `target` in process, its lifespan run around the block: no socket, no
    uvicorn. Streams arrive whole, so timing and disconnects need `running_app`."""
    app = _app(target, options)
    with TestClient(app, base_url=LOCAL_BASE, client=LOCAL_CLIENT) as client:
        yield client


def free_port() -> int:
    """A loopback port nothing listens on (for a server started as a process)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
