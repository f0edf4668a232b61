"""`ask` through MCP on the real local model and the real installed docs (one question)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import TextContent

from codeweaver.api.startup import open_service
from codeweaver.config import Settings
from codeweaver.mcp_server.server import build_server

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

SOURCE_LINE = re.compile(r"^\[(\d+)\] .+ — https?://\S+ \(installed docs", re.MULTILINE)


async def test_ask_over_mcp_cites_the_installed_docs(tmp_path: Path) -> None:
    # Weights and the docs index come from the user cache; threads start empty, and the
    # answer cache is off so the model really answers.
    settings = Settings(
        data_dir=tmp_path / "data", enabled_sources="installed_docs", cache_enabled=False
    )
    async with open_service(settings) as running:
        chat = await running.service()
        await running.prepared()  # every source settled, as the question expects
        async with Client(build_server(lambda: chat), mode="legacy") as client:
            result = await client.call_tool(
                "ask",
                {"question": "How do I read a file line by line in Python?"},
                read_timeout_seconds=600,
            )
    content = result.content[0]
    assert isinstance(content, TextContent)
    text = content.text
    assert not result.is_error, text
    answer, _, rest = text.partition("\nSources:\n")
    assert "open(" in answer, text
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    listed = {int(n) for n in SOURCE_LINE.findall(rest)}
    assert cited and listed and cited <= listed, text
    assert "\n- Searching installed docs…\n" in rest and "Session: " in rest, text
