"""A command group whose commands live in another package, imported when it is invoked.

`codeweaver eval` is such a group: its commands belong to the measurement package
(`codeweaver[eval]`), which the product never imports. `codeweaver --help` lists the group
from its help text alone; `codeweaver eval …` loads the commands, or says what to install.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from codeweaver.cli.common import fail


def lazy_typer(target: str, *, help: str, extra: str) -> typer.Typer:
    """A sub-app standing for the `typer.Typer` at `target` ("module:attribute"), which is
    imported on first use; `extra` is the optional dependency that installs it."""

    class Commands(LazyGroup):
        pass

    Commands.target, Commands.extra = target, extra
    return typer.Typer(cls=Commands, help=help, no_args_is_help=True)


class LazyGroup(TyperGroup):
    """Fills its commands from `target` the first time they are needed."""

    target = ""
    extra = ""

    def _load(self) -> None:
        if self.commands:
            return
        module_name, _, attribute = self.target.partition(":")
        try:
            # By name at run time, never a static import: the package is optional, its
            # import costs time `--help` must not pay, and the import contract keeps the
            # product from importing it.
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = exc.name or module_name
            if missing.partition(".")[0] == __name__.partition(".")[0]:
                raise  # a module of the product itself: a bug, not a missing install
            fail(
                f"'{self.name}' needs the optional package {module_name.partition('.')[0]} "
                f"(module '{missing}' is not installed): pip install 'codeweaver[{self.extra}]'"
            )
        group = typer.main.get_group(getattr(module, attribute))
        self.commands.update(group.commands)

    # `Any` for the context: typer's classes take the click it bundles, not the package.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        self._load()  # before `--help` or a missing command is answered
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: Any) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        self._load()
        return super().get_command(ctx, cmd_name)
