"""`langgraph.json` names graphs that LangGraph Studio / Server can load."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _entries() -> dict[str, str]:
    return dict(json.loads((ROOT / "langgraph.json").read_text("utf-8"))["graphs"])


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
    path, _, factory = _entries()[name].partition(":")
    spec = importlib.util.spec_from_file_location("studio_entry", ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    drawn = getattr(module, factory)().get_graph()
    assert ("__start__", first_node) in {(e.source, e.target) for e in drawn.edges}
