"""`codeweaver mcp` as a subprocess, driven by the SDK's stdio client."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp_types import TextContent

from tests.fakes import PYTHON_DOCS_FIXTURE

ROOT = Path(__file__).resolve().parents[3]


def parameters(tmp_path: Path) -> StdioServerParameters:
    code = tmp_path / "code"
    code.mkdir()
    (code / "lines.py").write_text(
        "def read_lines(path):\n    with open(path) as handle:\n        return list(handle)\n"
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codeweaver", "mcp"],
        cwd=tmp_path,  # no stray .env, no git repository to index
        env={
            "PYTHONPATH": str(ROOT / "src"),
            "CODEWEAVER_MODEL": "scripted:echo",
            "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
            "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
            "CODEWEAVER_CACHE": "false",  # the semantic cache would load an embedder
            # Offline sources only: two real Python docs pages, a one-file code folder.
            "CODEWEAVER_SOURCES": "python_docs,local_code",
            "CODEWEAVER_PYTHON_DOCS": str(PYTHON_DOCS_FIXTURE),
            "CODEWEAVER_CODE_PATHS": str(code),
            "CODEWEAVER_PROJECT": str(tmp_path),
        },
    )


def text_of(result: object) -> str:
    content = result.content[0]  # type: ignore[attr-defined]
    assert isinstance(content, TextContent)
    return content.text


async def test_stdio_server_answers_searches_and_reports_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    transport_errors: list[Exception] = []
    seen: list[str] = []

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):  # e.g. a stdout line that is not JSON-RPC
            transport_errors.append(message)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w") as stderr:
        transport = stdio_client(parameters(tmp_path), errlog=stderr)
        async with Client(transport, mode="legacy", message_handler=on_message) as client:
            tools = (await client.list_tools()).tools
            answer = await client.call_tool(
                "ask",
                {"question": "How do I read a file line by line in Python?"},
                read_timeout_seconds=120,
                progress_callback=on_progress,
            )
            code = await client.call_tool("search_code", {"query": "read_lines"})
            docs = await client.call_tool("search_docs", {"query": "close the file", "limit": 2})
            github = await client.call_tool("search_github", {"query": "read lines"})
            empty = await client.call_tool("ask", {"question": ""})
    log = stderr_path.read_text()
    # Nothing but the protocol on stdout: the client would log a line it cannot parse.
    unparsed = [r for r in caplog.records if r.name.startswith("mcp.client")]
    assert [r.getMessage() for r in unparsed if r.levelno >= logging.ERROR] == []
    assert transport_errors == [], log

    # Only the tools of enabled sources; `ask` reaches no network with local sources only.
    listed = {t.name: t for t in tools}
    assert set(listed) == {"ask", "search_docs", "search_code"}
    assert all(t.input_schema.get("properties") for t in tools)
    assert all(t.output_schema for t in tools)
    annotations = listed["ask"].annotations
    assert annotations is not None and annotations.open_world_hint is False

    text = text_of(answer)
    assert not answer.is_error, log
    assert text.startswith("Scripted answer to: How do I read a file line by line in Python? [1]")
    assert "\nSources:\n[1] " in text and "https://docs.python.org/" in text
    assert "\nSteps:\n- Understanding the question\n" in text and "Python docs" in text
    assert "Session: " in text
    structured = answer.structured_content
    assert structured is not None and structured["answer"] in text
    assert f"Session: {structured['session_id']} " in text
    assert any(m.startswith("Searching ") for m in seen), seen

    assert not code.is_error
    assert "lines.py" in text_of(code) and "def read_lines(path):" in text_of(code)
    assert github.is_error and "Unknown tool: search_github" in text_of(github)
    # The docs' ranked list with scores (no bar by default), how fresh their index is,
    # and what the limit left out.
    found = docs.structured_content
    assert not docs.is_error and found is not None, text_of(docs)
    assert len(found["results"]) == 2
    assert all(isinstance(r["score"], float) for r in found["results"])
    assert f"score: {found['results'][1]['score']:.3f}" in text_of(docs)
    assert [i["source"] for i in found["index"]] == ["python_docs"]
    assert text_of(docs).startswith("index: python_docs index built ")
    assert found["cut"][0]["beyond_limit"] > 0 and "\ncut: python_docs: " in text_of(docs)
    assert empty.is_error and "the question is empty" in text_of(empty)
