"""`from codeweaver import …` gives the Python API the README shows, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import codeweaver


def test_every_exported_name_resolves_to_its_defining_object() -> None:
    from codeweaver.agent.runner import Assistant
    from codeweaver.config import Settings
    from codeweaver.factory import open_assistant
    from codeweaver.sources.base import register_source

    assert codeweaver.Settings is Settings
    assert codeweaver.Assistant is Assistant
    assert codeweaver.open_assistant is open_assistant
    assert codeweaver.register_source is register_source
    assert sorted(codeweaver.__all__) == sorted(codeweaver._EXPORTS)
    for name in codeweaver.__all__:
        assert getattr(codeweaver, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = codeweaver.nothing  # type: ignore[attr-defined]


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, codeweaver; "
        "print(sorted(m for m in sys.modules if m.startswith(('langgraph', 'langchain', "
        "'fastapi', 'codeweaver.agent', 'codeweaver.factory'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"
