"""`langgraph.json` names graphs that LangGraph Studio / Server can load."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import PYTHON_DOCS_FIXTURE

ROOT = Path(__file__).resolve().parents[2]


def _entries() -> dict[str, str]:
    return dict(json.loads((ROOT / "langgraph.json").read_text("utf-8"))["graphs"])


def _load(name: str) -> Any:
    """The module `langgraph.json` names for graph `name`, loaded from its path as the
    server does (a fresh module: nothing built by an earlier test is reused)."""
    path = _entries()[name].partition(":")[0]
    spec = importlib.util.spec_from_file_location("studio_entry", ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "first_node"),
    [("codeweaver", "route_query"), ("codeweaver_librarian", "librarian_start")],
)
def test_each_exported_graph_compiles(
    name: str, first_node: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    module = _load(name)
    factory = _entries()[name].partition(":")[2]
    drawn = asyncio.run(getattr(module, factory)()).get_graph()
    assert ("__start__", first_node) in {(e.source, e.target) for e in drawn.edges}


async def test_both_graphs_answer_two_turns_without_blocking_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As LangGraph Server runs them: the factory and every node on the server's event
    loop, where `langgraph dev` stops a run at the first blocking call (it uses
    blockbuster, as this test does). Sources whose status reads the disk or runs the
    project's interpreter are on, so a status checked on the loop fails the test."""
    from blockbuster import blockbuster_ctx
    from langgraph.checkpoint.memory import InMemorySaver

    code = tmp_path / "project"
    code.mkdir()
    (code / "reader.py").write_text("def read_rows(path):\n    return open(path).readlines()\n")
    for name, value in {
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_SOURCES": "python_docs,local_code,knowledge_base",
        "CODEWEAVER_PYTHON_DOCS": str(PYTHON_DOCS_FIXTURE),
        "CODEWEAVER_CODE_PATHS": str(code),
    }.items():
        monkeypatch.setenv(name, value)
    module = _load("codeweaver")
    questions = ["How do I read a file line by line in Python?", "그럼 예제 코드도 보여줘"]
    for factory in ("make_graph", "make_librarian_graph"):
        with blockbuster_ctx():
            graph = await getattr(module, factory)()
            graph = graph.copy(update={"checkpointer": InMemorySaver()})
            config = {"configurable": {"thread_id": factory}}
            outputs = [
                await graph.ainvoke({"question": q, "messages": [("user", q)]}, config)
                for q in questions
            ]
        first, follow_up = outputs
        assert first["answer"] and len(follow_up["messages"]) == 4
        if factory == "make_graph":
            assert first["question_type"] == "new_topic"
            assert follow_up["question_type"] == "clarification"  # the thread's history
            assert first["sources"][0]["reference"].startswith("python-docs:tutorial/")
