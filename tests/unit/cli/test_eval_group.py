"""`codeweaver eval` loads the measurement package only when invoked, and says what to
install when it is missing."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import click
import pytest
import typer
from typer.testing import CliRunner

from codeweaver.cli.app import app

EVAL_COMMANDS = [
    "intent", "cache", "grounding", "grounding-set", "code", "retrieval", "split", "answers",
    "blind", "unblind", "rubric",
]  # fmt: skip


class _Missing(importlib.abc.MetaPathFinder):
    """Makes `codeweaver_eval` unimportable, as when it is not installed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] == "codeweaver_eval":
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


@pytest.fixture
def without_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.partition(".")[0] == "codeweaver_eval"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_Missing(), *sys.meta_path])


def test_the_eval_group_holds_every_command_and_runs_them() -> None:
    group = typer.main.get_command(app)
    with click.Context(group) as ctx:
        evaluations = group.get_command(ctx, "eval")  # type: ignore[attr-defined]
        assert evaluations.list_commands(ctx) == EVAL_COMMANDS
    result = CliRunner().invoke(app, ["eval", "intent", "--help"])
    assert result.exit_code == 0, result.output
    assert "--by" in result.stdout


def test_the_top_level_help_lists_eval_without_loading_it(without_eval: None) -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    assert "eval" in result.stdout and "Measure intent classification" in result.stdout
    assert "codeweaver_eval" not in sys.modules


@pytest.mark.parametrize("args", [["eval"], ["eval", "--help"], ["eval", "intent", "--help"]])
def test_without_the_package_eval_says_what_to_install(without_eval: None, args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "pip install 'codeweaver[eval]'" in " ".join(result.stderr.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)
