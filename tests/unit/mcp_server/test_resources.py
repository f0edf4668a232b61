"""The resource templates citations point to: installed API pages, knowledge-base files
(only indexed ones, never a path outside them), and the `resource` field of results."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, TextResourceContents

from codeweaver.api.service import ChatService
from codeweaver.mcp_server.resources import KbFile
from codeweaver.mcp_server.server import build_server
from codeweaver.mcp_server.uris import DOCS_TEMPLATE, KB_TEMPLATE, kb_uri, resource_uri
from codeweaver.vocabulary import SearchResult
from tests.unit.mcp_server.helpers import chat_service
from tests.unit.mcp_server.test_project import VersionedDocs, page


class PagedDocs(VersionedDocs):
    """Installed docs whose loaded index documents `pandas.concat` at 2.1.0."""

    def api_pages(self, names: Sequence[str]) -> list[SearchResult]:
        return [page(name) for name in names if name == "pandas.concat"]


class UnloadedDocs(PagedDocs):
    def installed_versions(self) -> dict[str, str]:
        return {}


@pytest.fixture
def kb_root(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "deploy notes.md").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    (root / "notes" / "secret.md").write_text("not indexed\n", encoding="utf-8")
    return root


def indexed(root: Path) -> list[KbFile]:
    # Stored as indexing stored it: resolved then, not now.
    return [KbFile("notes/deploy notes.md", str(root.resolve() / "notes" / "deploy notes.md"))]


async def read_or_error(tmp_path: Path, uri: str, kb: Path | None = None) -> str | MCPError:
    def files(chat: ChatService) -> list[KbFile]:
        assert kb is not None
        return indexed(kb)

    async with (
        chat_service(tmp_path, [PagedDocs(results=[page("pandas.concat")])]) as chat,
        Client(build_server(lambda: chat, kb_files=files if kb else None)) as client,
    ):
        try:
            result = await client.read_resource(uri)
        except MCPError as exc:  # caught here: leaving the client would wrap it in a group
            return exc
    content = result.contents[0]
    assert isinstance(content, TextResourceContents)
    return content.text


async def read(tmp_path: Path, uri: str, kb: Path | None = None) -> str:
    found = await read_or_error(tmp_path, uri, kb)
    assert isinstance(found, str), found
    return found


async def refused(tmp_path: Path, uri: str, kb: Path | None = None) -> str:
    found = await read_or_error(tmp_path, uri, kb)
    assert isinstance(found, MCPError)
    assert found.code == INVALID_PARAMS
    return str(found)


async def test_the_templates_are_listed(tmp_path: Path) -> None:
    async with chat_service(tmp_path) as chat, Client(build_server(lambda: chat)) as client:
        listed = (await client.list_resource_templates()).resource_templates
    assert {t.uri_template for t in listed} == {DOCS_TEMPLATE, KB_TEMPLATE}
    assert all(t.description for t in listed)


async def test_an_api_page_reads_as_indexed(tmp_path: Path) -> None:
    text = await read(tmp_path, "codeweaver://docs/pandas/2.1.0/pandas.concat")
    assert text.startswith("pandas.concat — pandas 2.1.0\nreference: pandas:pandas.concat@2.1.0\n")
    assert "pandas.concat(objs, axis=0)\n\nConcatenate objects." in text


async def test_an_api_page_at_another_version_or_unknown_is_not_found(tmp_path: Path) -> None:
    other = await refused(tmp_path, "codeweaver://docs/pandas/2.2.3/pandas.concat")
    assert "documented here at pandas 2.1.0, not 2.2.3" in other
    assert "codeweaver://docs/pandas/2.1.0/pandas.concat" in other
    missing = await refused(tmp_path, "codeweaver://docs/pandas/2.1.0/pandas.nothing")
    assert "no API page for pandas.nothing in pandas" in missing


async def test_an_api_page_before_the_index_is_loaded_says_so(tmp_path: Path) -> None:
    async with (
        chat_service(tmp_path, [UnloadedDocs()]) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        with pytest.raises(MCPError, match="not loaded yet; call search_docs first"):
            await client.read_resource("codeweaver://docs/pandas/2.1.0/pandas.concat")


async def test_a_kb_file_reads_whole_or_by_lines(tmp_path: Path, kb_root: Path) -> None:
    uri = kb_uri("notes/deploy notes.md")
    assert uri == "codeweaver://kb/notes/deploy%20notes.md"
    assert await read(tmp_path, uri, kb_root) == "one\ntwo\nthree\nfour\n"
    assert await read(tmp_path, f"{uri}?start=2&end=3", kb_root) == "two\nthree\n"
    assert await read(tmp_path, f"{uri}?start=4", kb_root) == "four\n"
    beyond = await read_or_error(tmp_path, f"{uri}?start=9", kb_root)
    assert isinstance(beyond, MCPError) and "no lines 9-4" in str(beyond)


@pytest.mark.parametrize(
    "path",
    [
        "../kb/notes/secret.md",
        "notes/../notes/secret.md",
        "%2E%2E/notes/secret.md",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "notes/secret.md",  # beside an indexed file, but not indexed
    ],
)
async def test_a_kb_path_outside_the_indexed_files_is_refused(
    tmp_path: Path, kb_root: Path, path: str
) -> None:
    message = await refused(tmp_path, f"codeweaver://kb/{path}", kb_root)
    assert "not indexed" not in message and "root:" not in message


async def test_a_kb_file_swapped_for_a_symlink_is_refused(tmp_path: Path, kb_root: Path) -> None:
    target = kb_root / "notes" / "deploy notes.md"
    target.unlink()
    target.symlink_to(kb_root / "notes" / "secret.md")
    message = await refused(tmp_path, kb_uri("notes/deploy notes.md"), kb_root)
    assert "no longer where it was indexed" in message


async def test_without_a_knowledge_base_a_kb_read_says_so(tmp_path: Path) -> None:
    message = await refused(tmp_path, kb_uri("notes/a.md"))
    assert "knowledge_base is not enabled" in message


def test_results_point_to_their_resources() -> None:
    assert resource_uri(page("pandas.concat")) == "codeweaver://docs/pandas/2.1.0/pandas.concat"
    kb = {"source": "knowledge_base", "reference": "kb:notes/deploy notes.md#3"}
    assert resource_uri(kb) == "codeweaver://kb/notes/deploy%20notes.md"
    topic = {"source": "installed_docs", "reference": "python:topic:for@3.11.4"}
    assert resource_uri(topic) is None
    assert resource_uri({"source": "stackoverflow", "reference": "stackoverflow:q1"}) is None


async def test_search_results_carry_their_resource(tmp_path: Path) -> None:
    async with (
        chat_service(tmp_path, [PagedDocs(results=[page("pandas.concat")])]) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        result = await client.call_tool("search_docs", {"query": "pandas concat"})
        item = result.structured_content["results"][0]  # type: ignore[index]
        assert item["resource"] == "codeweaver://docs/pandas/2.1.0/pandas.concat"
        # ... which reads back the page the result quotes.
        read_back = await client.read_resource(item["resource"])
    content = read_back.contents[0]
    assert isinstance(content, TextResourceContents)
    assert "reference: pandas:pandas.concat@2.1.0" in content.text
