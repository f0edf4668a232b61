"""LangGraph Server (`langgraph dev`, in-memory runtime) serving the graphs of
`langgraph.json`, driven over HTTP with `langgraph_sdk` as Studio drives it.

The server runs from `.venv-langgraph` (made by `scripts/bootstrap.sh dev`; see
requirements/langgraph-server.txt for why it is a venv of its own) and without
`--allow-blocking`: its runtime then patches blocking calls (blockbuster) and fails a run
that makes one on the event loop, as it would for a developer in Studio.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient, get_client
from langgraph_sdk.schema import Run

from tests.fakes import PYTHON_DOCS_FIXTURE
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = ROOT / ".venv-langgraph" / "bin" / "langgraph"
GRAPHS = list(json.loads((ROOT / "langgraph.json").read_text("utf-8"))["graphs"])
STARTUP_SECONDS = 60.0
FIRST = "How do I read a file line by line in Python?"
FOLLOW_UP = "show me an example"  # refers back: a clarification of the first answer


@dataclass(frozen=True)
class Server:
    url: str
    log: Path

    def size(self) -> int:
        return self.log.stat().st_size

    def output(self, start: int = 0) -> str:
        """What the server logged from byte `start` on."""
        with self.log.open("rb") as log:
            log.seek(start)
            return log.read().decode("utf-8", errors="replace")


def _config(workdir: Path) -> Path:
    """The repository's `langgraph.json` with absolute paths, written to `workdir`.

    The server keeps its state (`.langgraph_api/`) in its working directory, so it runs
    in a temporary one rather than in the checkout.
    """
    config: dict[str, Any] = json.loads((ROOT / "langgraph.json").read_text("utf-8"))
    config["dependencies"] = [str((ROOT / dep).resolve()) for dep in config["dependencies"]]
    config["graphs"] = {
        name: f"{(ROOT / spec.partition(':')[0]).resolve()}:{spec.partition(':')[2]}"
        for name, spec in config["graphs"].items()
    }
    # The environment is the test's: a developer's `.env` must not choose the model.
    config.pop("env", None)
    path = workdir / "langgraph.json"
    path.write_text(json.dumps(config), "utf-8")
    return path


def _environment(tmp: Path) -> dict[str, str]:
    code = tmp / "project"
    code.mkdir()
    (code / "reader.py").write_text("def read_rows(path):\n    return open(path).readlines()\n")
    # Nothing inherited may pick another model or source, or turn on tracing: nothing here
    # needs the network.
    prefixes = ("CODEWEAVER_", "LANGSMITH_", "LANGCHAIN_")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {
        **inherited,
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_DATA_DIR": str(tmp / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp / "cache"),
        # Offline sources whose status and search touch the disk (a blocking call there
        # would fail the run), on small inputs: not the whole installed-docs index.
        "CODEWEAVER_SOURCES": "python_docs,local_code,knowledge_base",
        "CODEWEAVER_PYTHON_DOCS": str(PYTHON_DOCS_FIXTURE),
        "CODEWEAVER_CODE_PATHS": str(code),
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
    }


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT to the server's process group (Ctrl-C: uvicorn shuts down), then SIGKILL."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not LANGGRAPH.is_file():
        pytest.fail(f"{LANGGRAPH} is missing: run ./scripts/bootstrap.sh dev")
    tmp = tmp_path_factory.mktemp("langgraph")
    workdir = tmp / "server"
    workdir.mkdir()
    port = free_port()
    server = Server(url=f"http://127.0.0.1:{port}", log=tmp / "server.log")
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--config", str(_config(workdir))]
    with server.log.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=_environment(tmp),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as one
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"langgraph dev exited with {process.returncode}:\n{server.output()}")
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev not ready in {STARTUP_SECONDS} s:\n{server.output()}")
            try:
                if httpx.get(f"{server.url}/ok", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        yield server
    finally:
        _stop(process)


async def _turn(client: LangGraphClient, thread_id: str, graph: str, question: str) -> Run:
    """One run of `graph` on the thread, as Studio sends a message; the run, once done."""
    turn: dict[str, Any] = {
        "question": question,
        "messages": [{"role": "user", "content": question}],
    }
    run = await client.runs.create(thread_id, graph, input=turn)
    await client.runs.join(thread_id, run["run_id"])
    return await client.runs.get(thread_id, run["run_id"])


async def _values(client: LangGraphClient, thread_id: str) -> dict[str, Any]:
    """The thread's state as the server's checkpointer holds it."""
    values = (await client.threads.get_state(thread_id))["values"]
    assert isinstance(values, dict), values
    return values


@pytest.mark.parametrize("graph", GRAPHS)
async def test_graph_answers_two_turns_on_a_server_thread(server: Server, graph: str) -> None:
    start = server.size()  # this test's part of the log: the server serves every test
    runs: list[Run] = []
    answers: list[str] = []
    try:
        async with get_client(url=server.url, api_key=None) as client:
            thread = await client.threads.create()
            thread_id = thread["thread_id"]
            for question in (FIRST, FOLLOW_UP):
                runs.append(await _turn(client, thread_id, graph, question))
                values = await _values(client, thread_id)
                answers.append(values.get("answer", ""))
            history = await client.runs.list(thread_id)
    except Exception as exc:  # the client sees a status, the server's log says why
        pytest.fail(f"{exc!r}\n{server.output(start)}")

    log = server.output(start)
    assert "BlockingError" not in log and "Blocking call" not in log, log
    assert [r["status"] for r in runs] == ["success", "success"], log
    assert len(history) == 2
    assert all(a.strip() for a in answers), answers
    # The server's checkpointer kept the thread: both questions and both answers.
    messages = values["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "human", "ai"]
    assert [messages[0]["content"], messages[2]["content"]] == [FIRST, FOLLOW_UP]
    assert messages[3]["content"] == answers[1]
    # The server ran with blockbuster on: it warns at startup when blocking is allowed.
    assert "You've set --allow-blocking" not in server.output()
    if graph == "codeweaver":
        # The pipeline read the thread's history: the second turn is a clarification,
        # answered from that history. (The librarian has no such route: its model reads
        # the history in every decision.)
        assert values["question_type"] == "clarification"
        nodes = [s["node"] for s in values["intermediate_steps"]]
        assert nodes[-1] == "generate_with_history", nodes
