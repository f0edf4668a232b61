"""The service under test: `running_app` serves it on a loopback port (the e2e tier),
`app_client` drives the same app in process (the unit tier); `free_port` is for servers
started as processes."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.testclient import TestClient

from codeweaver.agent.deps import Deps
from codeweaver.api.app import create_app

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
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        _app(target, options),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        proxy_headers=False,  # as `codeweaver serve`: the app weighs X-Forwarded-For
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server stopped while starting (see its log)")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not start within {START_SECONDS:.0f} s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


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
