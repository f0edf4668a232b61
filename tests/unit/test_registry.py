"""The one registry mechanism: decorator registration, built-in modules, entry-point
plugins, and a broken plugin reported instead of stopping the program."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint

import pytest

from codeweaver import registry as registry_module
from codeweaver.registry import Registry, UnknownNameError

Factory = Callable[[str], str]


def plugin_factory(name: str) -> str:
    return f"plugin:{name}"


def plugins(*points: EntryPoint) -> Callable[..., list[EntryPoint]]:
    def entry_points(*, group: str) -> list[EntryPoint]:
        return [p for p in points if p.group == group]

    return entry_points


def test_decorator_registers_and_unknown_names_list_the_known_ones() -> None:
    kinds: Registry[Factory] = Registry("widget", group="codeweaver.test-none")

    @kinds.register("plain")
    def plain(name: str) -> str:
        return f"plain:{name}"

    assert kinds.names() == ["plain"]
    assert kinds.get("plain")("x") == "plain:x"
    with pytest.raises(UnknownNameError, match=r"unknown widget 'fancy'; known: plain"):
        kinds.get("fancy")
    kinds.unregister("plain")
    assert "plain" not in kinds


def test_builtin_modules_are_imported_on_first_use() -> None:
    # The real source registry: its built-ins register themselves when imported.
    from codeweaver.sources.base import SOURCES

    assert {"installed_docs", "stackoverflow", "web", "knowledge_base"} <= set(SOURCES.names())


def test_entry_point_plugins_load_and_a_broken_one_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = "codeweaver.widgets"
    good = EntryPoint("extra", f"{__name__}:plugin_factory", group)
    broken = EntryPoint("broken", "codeweaver_no_such_plugin:factory", group)
    other = EntryPoint("elsewhere", f"{__name__}:plugin_factory", "codeweaver.other")
    monkeypatch.setattr(registry_module, "entry_points", plugins(good, broken, other))
    kinds: Registry[Factory] = Registry("widget", group=group)

    assert kinds.names() == ["extra"]  # the broken one and the other group's are not
    assert kinds.get("extra")("x") == "plugin:x"
    failed = kinds.failed_plugins()
    assert list(failed) == ["broken"]
    assert "ModuleNotFoundError" in failed["broken"]


def test_a_built_in_keeps_its_name_against_a_plugin_of_the_same_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = "codeweaver.widgets"
    same = EntryPoint("plain", f"{__name__}:plugin_factory", group)
    monkeypatch.setattr(registry_module, "entry_points", plugins(same))
    kinds: Registry[Factory] = Registry("widget", group=group)

    @kinds.register("plain")
    def plain(name: str) -> str:
        return f"plain:{name}"

    assert kinds.get("plain")("x") == "plain:x"
