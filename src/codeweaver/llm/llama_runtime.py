"""llama.cpp's native server, prebuilt (the `xllamacpp` wheels), running a GGUF in this process.

One `xllamacpp.Server` loads the weights once and decodes up to `slots` requests at a time
with continuous batching; it is thread-safe, so callers need no lock. It always listens on
HTTP too: here on a free loopback port, behind a random key only this process knows, so
nothing else on the machine can use it unless it is meant to (`model_server` forwards to it).

The prebuilt Linux wheels are compiled without `-march=native`, so they use AVX2 but never
AMX tiles, which fault on CPUs whose kernel or hypervisor does not grant them.

llama.cpp's server installs its own SIGINT and SIGTERM handlers when it starts: Ctrl-C would
stop the model instead of the program, and uvicorn would never hear SIGTERM. The handlers in
place before it started are put back (`_kept_signal_handlers`), from any thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import secrets
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# Requests the in-process model decodes together: a two-question message answers both at
# once, and more would only share the same cores.
IN_PROCESS_SLOTS = 2
# Host memory kept for idle slots' prompts (llama.cpp's default is 8 GiB).
_PROMPT_CACHE_MIB = 512
# Larger than any libc's `struct sigaction` (152 bytes on x86-64 glibc): kept as raw bytes.
_SIGACTION_BYTES = 512


class LocalModelError(RuntimeError):
    """llama.cpp refused or failed a request; the message is its own."""


@dataclass(frozen=True)
class Runtime:
    """How to run one GGUF: `context` tokens for each of `slots` requests decoded together."""

    path: Path
    alias: str
    context: int
    threads: int
    slots: int


def _libc() -> Any:
    if not sys.platform.startswith(("linux", "darwin")):
        return None
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


@contextlib.contextmanager
def _kept_signal_handlers() -> Iterator[None]:
    """Restore SIGINT's and SIGTERM's process-wide handlers after the block."""
    libc = _libc()
    saved: list[tuple[int, ctypes.Array[ctypes.c_char]]] = []
    if libc is not None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            old = ctypes.create_string_buffer(_SIGACTION_BYTES)
            if libc.sigaction(int(signum), None, old) == 0:
                saved.append((int(signum), old))
    try:
        yield
    finally:
        for number, old in saved:
            if libc.sigaction(number, old, None) != 0:
                logger.warning("cannot restore the handler of signal %d", number)


def start_server(runtime: Runtime, api_key: str | None = None) -> Any:
    """Load `runtime`'s model into a native server on a free loopback port (a few seconds).

    `api_key`: the key its HTTP side wants (default: a random one nobody else knows)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(runtime.path)
    params.model_alias = {runtime.alias}
    # The context is shared out among the slots: each one gets `context` tokens.
    params.n_parallel = runtime.slots
    params.n_ctx = runtime.context * runtime.slots
    params.cpuparams.n_threads = runtime.threads
    params.cpuparams_batch.n_threads = runtime.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [api_key or secrets.token_urlsafe(24)]
    params.ui = False
    params.verbosity = 0
    params.cache_ram_mib = _PROMPT_CACHE_MIB
    with _kept_signal_handlers():
        try:
            return xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalModelError(f"llama.cpp cannot load {runtime.path}: {exc}") from None


def reply_error(reply: dict[str, Any]) -> str | None:
    """The error a llama.cpp reply (or streamed part) carries, None when it is an answer."""
    error = reply.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if error is not None:
        return str(error)
    if "choices" not in reply and reply.get("message"):  # the binding's own failures
        return str(reply["message"])
    return None
