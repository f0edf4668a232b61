"""Inside the agent, a rule or an answer tool never imports a node, nor a node the graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.architecture.test_layers import copy_sources, lint

CONTRACT = "Inside the agent, graphs build on nodes, nodes on the rules and answer tools"


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("rules.guard", "nodes.plan"),
        ("answering.grounding", "nodes.check"),
        ("nodes.answer", "graph"),
        ("state", "steps"),
    ],
)
def test_an_upward_import_inside_the_agent_breaks_its_contract(
    tmp_path: Path, module: str, upward: str
) -> None:
    copy_sources(tmp_path)
    path = (tmp_path / "codeweaver" / "agent" / module.replace(".", "/")).with_suffix(".py")
    path.write_text(path.read_text() + f"\nimport codeweaver.agent.{upward}  # upward\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert f"{CONTRACT} BROKEN" in " ".join(result.stdout.split())
    assert f"codeweaver.agent.{module} -> codeweaver.agent.{upward}" in result.stdout
