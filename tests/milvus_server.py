"""A Milvus Lite gRPC server for tests: `with milvus_lite_server(tmp_path) as uri: ...`.

The server is a separate OS process (`python -m milvus_lite server`), bound to 127.0.0.1
on a free port, so several processes (tests, subprocesses, replicas) share one store
through `MILVUS_URI=uri`. Needs the `milvus` extra.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

START_SECONDS = 30.0
STOP_SECONDS = 10.0
_ATTEMPTS = 3  # a free port can be taken between choosing it and the server binding it


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGINT)  # the server drains requests and closes its files
    try:
        server.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(STOP_SECONDS)


def _start(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    for _ in range(_ATTEMPTS):
        port = free_port()
        command = [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data_dir)]
        command += ["--host", "127.0.0.1", "--port", str(port)]
        with log.open("ab") as out:
            server = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + START_SECONDS
        while server.poll() is None and time.monotonic() < deadline:
            if _accepts(port):
                return server, port
            time.sleep(0.1)
        _stop(server)
    output = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"Milvus Lite server did not start on {data_dir}:\n{output}")


@contextlib.contextmanager
def milvus_lite_server(data_dir: Path) -> Iterator[str]:
    """Run a Milvus Lite server on `data_dir` (created if missing) and yield its URI,
    `http://127.0.0.1:PORT`; the server is stopped when the block ends."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="milvus-log-") as logs:
        server, port = _start(data_dir, Path(logs) / "server.log")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            _stop(server)
