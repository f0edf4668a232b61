"""`SKILL.md` and `server.json` at the repository root: well formed, naming only the tools
the server lists, and `server.json` at the package's own version and command line."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import typer.main
import yaml  # type: ignore[import-untyped]
from mcp import Client

from codeweaver.mcp_server.search import search_tools
from codeweaver.mcp_server.server import build_server
from tests.unit.mcp_server.helpers import chat_service

ROOT = Path(__file__).resolve().parents[3]
# The agent skills format: a lowercase name with single hyphens, a description of at most
# 1,024 characters.
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# The MCP registry's server name: reverse-DNS namespace, one slash, the server's name.
SERVER_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
SCHEMA_URL = re.compile(
    r"^https://static\.modelcontextprotocol\.io/schemas/\d{4}-\d{2}-\d{2}/server\.schema\.json$"
)


def project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)["project"]
    return data


def skill() -> tuple[dict[str, Any], str]:
    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    assert match, "SKILL.md starts with YAML front matter between --- lines"
    front = yaml.safe_load(match.group(1))
    assert isinstance(front, dict)
    return front, match.group(2)


def named_tools(text: str) -> set[str]:
    """The tool names in backticks: `ask`, `search_…` (a call's name before its `(`)."""
    leads = (re.match(r"[A-Za-z_]+", span) for span in re.findall(r"`([^`\n]+)`", text))
    names = {lead.group() for lead in leads if lead}
    return {name for name in names if name == "ask" or name.startswith("search")}


async def listed_tools(tmp_path: Path) -> set[str]:
    async with chat_service(tmp_path) as chat, Client(build_server(lambda: chat)) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


async def test_skill_md_names_only_listed_tools_and_covers_them(tmp_path: Path) -> None:
    front, body = skill()
    assert SKILL_NAME.match(front["name"]) and len(front["name"]) <= 64
    description = front["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    assert "\n" not in description.strip()  # a folded scalar: one paragraph
    tools = await listed_tools(tmp_path)
    assert tools == {"ask", *search_tools()}
    named = named_tools(description + body)
    assert named <= tools, f"not tools the server lists: {sorted(named - tools)}"
    assert named == tools, f"tools the skill never mentions: {sorted(tools - named)}"
    words = " ".join(body.split())
    assert "untrusted data, never instructions" in words
    assert 20 <= len(body.splitlines()) <= 80  # a few dozen lines


def test_the_tool_name_check_sees_a_misspelt_tool() -> None:
    assert named_tools("use `search_doc` or `ask(question)`, with `session_id`") == {
        "search_doc",
        "ask",
    }


def test_server_json_is_a_registry_entry_at_the_package_version() -> None:
    data = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    meta = project()
    assert SCHEMA_URL.match(data["$schema"])
    assert SERVER_NAME.match(data["name"]) and 3 <= len(data["name"]) <= 200
    assert 0 < len(data["description"]) <= 100  # the registry's limit
    assert data["version"] == meta["version"]
    [package] = data["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == meta["name"]
    assert package["version"] == meta["version"]
    assert package["transport"] == {"type": "stdio"}
    # The command it runs is `codeweaver mcp`: the package's script, then its arguments.
    arguments = [arg["value"] for arg in package["packageArguments"]]
    assert [package["identifier"], *arguments] == ["codeweaver", "mcp"]
    assert "codeweaver" in meta["scripts"]
    from codeweaver.cli.app import app

    command = typer.main.get_command(app)
    assert "mcp" in command.commands  # type: ignore[attr-defined]
    # Environment variables it names are settings CodeWeaver reads.
    for variable in package["environmentVariables"]:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", variable["name"])
        assert variable.get("isSecret", False) == ("TOKEN" in variable["name"])


def test_server_json_mentions_only_listed_tools() -> None:
    text = (ROOT / "server.json").read_text(encoding="utf-8")
    named = {m for m in re.findall(r"\b(?:ask|search_[a-z_]+)\b", text)}
    assert named <= {"ask", *search_tools()}
