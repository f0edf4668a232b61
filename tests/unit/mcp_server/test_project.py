"""The `project` argument of `ask` and `search_docs`: validated, documented in the input
schema, and turned into notes where the server's docs differ from the caller's project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from codeweaver.mcp_server.project import MAX_PACKAGES, Project, documented, project_notes
from codeweaver.mcp_server.server import build_server
from codeweaver.vocabulary import SearchResult
from tests.fakes import FakeSource
from tests.unit.mcp_server.helpers import QUESTION, chat_service


def page(symbol: str, version: str = "2.1.0", package: str = "pandas") -> SearchResult:
    return {
        "title": f"{symbol} — {package} {version}",
        "url": f"https://{package}.example/{symbol}",
        "snippet": f"{symbol}(objs, axis=0)\n\nConcatenate objects.",
        "source": "installed_docs",
        "score": 0.9,
        "reference": f"{package}:{symbol}@{version}",
    }


class VersionedDocs(FakeSource):
    """Installed docs that know their versions (pandas 2.1.0 only)."""

    def installed_versions(self) -> dict[str, str]:
        return {"pandas": "2.1.0"}


def text_of(result: CallToolResult) -> str:
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def search(tmp_path: Path, arguments: dict[str, Any]) -> CallToolResult:
    sources = [VersionedDocs(results=[page("pandas.concat")])]
    async with (
        chat_service(tmp_path, sources) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        return await client.call_tool("search_docs", arguments)


async def test_the_project_schema_is_in_the_input_schemas(tmp_path: Path) -> None:
    async with chat_service(tmp_path) as chat, Client(build_server(lambda: chat)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in ("ask", "search_docs"):
        schema = tools[name].input_schema
        assert "project" in schema["properties"] and "project" not in schema["required"]
        packages = schema["$defs"]["Project"]["properties"]["packages"]
        assert packages["maxProperties"] == MAX_PACKAGES
        assert "pattern" in packages["propertyNames"]
        assert packages["additionalProperties"]["pattern"]
    # The other search tools search no package docs: they take no project.
    assert "project" not in tools["search_stackoverflow"].input_schema["properties"]


async def test_search_docs_notes_a_version_mismatch_and_a_package_not_installed(
    tmp_path: Path,
) -> None:
    project = {"packages": {"pandas": "2.2.3", "polars": "1.9.0"}, "language": "python"}
    result = await search(tmp_path, {"query": "pandas concat vs polars concat", "project": project})
    assert not result.is_error
    notes = result.structured_content["project_notes"]  # type: ignore[index]
    assert notes == [
        "polars 1.9.0 is not installed on this server; its docs are not indexed here "
        "(answers about it come from the web sources, if any)",
        "pandas: the docs here are of version 2.1.0, your project uses 2.2.3; check "
        "version-specific details against it",
    ]
    for note in notes:
        assert f"note: {note}" in text_of(result)
    # The reference keeps the version the docs are of: never the project's.
    item = result.structured_content["results"][0]  # type: ignore[index]
    assert item["reference"] == "pandas:pandas.concat@2.1.0"


async def test_search_docs_without_a_mismatch_has_no_notes(tmp_path: Path) -> None:
    project = {"packages": {"pandas": "==2.1.0"}}
    result = await search(tmp_path, {"query": "pandas concat", "project": project})
    assert result.structured_content["project_notes"] == []  # type: ignore[index]
    bare = await search(tmp_path, {"query": "pandas concat"})
    assert bare.structured_content["project_notes"] == []  # type: ignore[index]


async def test_a_node_project_searches_only_the_npm_docs(tmp_path: Path) -> None:
    # Only installed_docs (Python) is configured: a node project has nothing to search.
    result = await search(tmp_path, {"query": "concat", "project": {"language": "node"}})
    assert result.is_error
    assert "npm_docs: not enabled" in text_of(result)


@pytest.mark.parametrize(
    ("project", "problem"),
    [
        ({"packages": {"bad name!": "1.0"}}, "package 1: the name is not a valid PyPI or npm name"),
        ({"packages": {"_pandas": "1.0"}}, "package 1: the name is not a valid PyPI or npm name"),
        ({"packages": {"pandas": "1" * 65}}, "package 1: the version must be 1-64 characters"),
        ({"packages": {"pandas": "1.0; rm -rf"}}, "package 1: the version must be"),
        ({"packages": {f"p{n}": "1.0" for n in range(MAX_PACKAGES + 1)}}, "at most 200 items"),
        ({"packages": {}, "venv": "/home/me"}, "invalid project.venv: Extra inputs"),
        ({"language": "rust"}, "invalid project.language"),
    ],
)
async def test_a_bad_project_is_a_clear_tool_error(
    tmp_path: Path, project: dict[str, Any], problem: str
) -> None:
    result = await search(tmp_path, {"query": "concat", "project": project})
    assert result.is_error
    text = text_of(result)
    assert problem in text
    assert "rm -rf" not in text and "bad name!" not in text  # the value is never quoted


def test_scoped_npm_names_and_pypi_names_are_valid() -> None:
    packages = {"@types/node": "20.1.0", "scikit-learn": "1.5.2", "zope.interface": "^7.0"}
    assert Project(packages=packages).packages == packages


def test_documented_reads_installed_and_npm_references() -> None:
    assert documented(page("pandas.concat")) == ("pandas", "2.1.0")
    npm = {"source": "npm_docs", "reference": "npm:@types/node@20.1.0#readme:usage"}
    assert documented(npm) == ("@types/node", "20.1.0")
    assert documented({"source": "installed_docs", "reference": "python:json.loads@3.11"}) is None
    assert documented({"source": "stackoverflow", "reference": "stackoverflow:q1"}) is None


def test_names_match_in_canonical_form() -> None:
    project = Project(packages={"Scikit_Learn": "1.5.2"})
    sklearn = page("sklearn.svm.SVC", "1.4.0", package="scikit-learn")
    notes = project_notes(project, "svc", [sklearn], {"scikit-learn": "1.4.0"})
    assert notes == [
        "Scikit_Learn: the docs here are of version 1.4.0, your project uses 1.5.2; check "
        "version-specific details against it"
    ]


async def test_ask_notes_a_package_the_server_lacks(tmp_path: Path) -> None:
    project = {"packages": {"polars": "1.9.0"}}
    question = "How do I read a file line by line with polars?"
    async with chat_service(tmp_path) as chat, Client(build_server(lambda: chat)) as client:
        result = await client.call_tool("ask", {"question": question, "project": project})
        plain = await client.call_tool("ask", {"question": QUESTION})
    assert not result.is_error
    note = (
        "polars 1.9.0 is not installed on this server; its docs are not indexed here "
        "(answers about it come from the web sources, if any)"
    )
    assert result.structured_content["project_notes"] == [note]  # type: ignore[index]
    assert text_of(result).endswith(f"note: {note}\n")
    assert plain.structured_content["project_notes"] == []  # type: ignore[index]
