"""What a call returns types the name it is assigned to: a single annotated class, `None`
dropped from a union, `Self` as the receiver's class, the first `@overload` the call can
match; anything else leaves the name unknown (never flagged)."""

from __future__ import annotations

import pytest

from codeweaver.codecheck import ApiIndex
from tests.unit.codecheck.files import flags, package_api

PACKAGE = {
    "depot/__init__.py": "from depot.core import Crate, Lazy, find, load, open_crate, pick\n",
    "depot/core.py": (
        "from typing import Literal, overload\n"
        "from typing_extensions import Self\n\n\n"
        "class Crate:\n"
        "    def copy(self) -> Self:\n        return self\n\n"
        "    def label(self) -> str:\n        return ''\n\n\n"
        "class Lazy:\n    def wait(self) -> Crate:\n        return Crate()\n\n\n"
        "def load(path: str) -> Crate:\n    return Crate()\n\n\n"
        "def find(name: str) -> Crate | None:\n    return None\n\n\n"
        "def pick(name: str) -> Crate | Lazy:\n    return Crate()\n\n\n"
        "@overload\n"
        "def open_crate(path: str, *, lazy: Literal[True]) -> Lazy: ...\n"
        "@overload\n"
        "def open_crate(path: str, *, lazy: Literal[False] = ..., size: int = ...) -> Crate: ...\n"
        "def open_crate(path, *, lazy=False, size=0):\n    return Crate()\n"
    ),
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> ApiIndex:
    return package_api(tmp_path_factory.mktemp("site"), PACKAGE)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import depot\nc = depot.load('a')\nc.open()\nc.label()\n", {"depot.Crate.open"}),
        ("import depot\nc = depot.find('a')\nc.shut()\n", {"depot.Crate.shut"}),  # None dropped
        ("import depot\nc = depot.load('a').copy()\nc.seal()\n", {"depot.Crate.seal"}),  # Self
        # overloads: the first the call matches
        ("import depot\nc = depot.open_crate('a')\nc.wait()\n", {"depot.Crate.wait"}),
        ("import depot\nc = depot.open_crate('a', lazy=True)\nc.wait()\nc.label()\n",
         {"depot.Lazy.label"}),
        ("import depot\nc = depot.open_crate('a', lazy=False, size=3)\nc.wait()\n",
         {"depot.Crate.wait"}),
        ("import depot\nc = depot.load('a').label()\nc.nothing()\n", {"str.nothing"}),
    ],
)  # fmt: skip
def test_a_returned_class_types_the_name(code: str, expected: set[str], api: ApiIndex) -> None:
    assert flags(code, api) == expected


@pytest.mark.parametrize(
    "code",
    [
        "import depot\nc = depot.pick('a')\nc.anything()\n",  # a union of two classes
        "import depot\nc = depot.open_crate('a', *args)\nc.anything()\n",  # unreadable call
        "import depot\nc = depot.open_crate('a', **kw)\nc.anything()\n",
    ],
)
def test_what_a_call_returns_is_not_guessed(code: str, api: ApiIndex) -> None:
    assert flags(code, api) == set()


def test_a_call_no_overload_fits_types_nothing(api: ApiIndex) -> None:
    code = "import depot\nc = depot.open_crate('a', colour=1)\nc.anything()\n"
    assert flags(code, api) == {"depot.open_crate(colour)"}  # the keyword, not `anything`


def test_members_inherited_through_typing_aliases_exist(api: ApiIndex) -> None:
    # typeshed: `class dict(MutableMapping[_KT, _VT])`; `update` and `setdefault` live there.
    code = "d = {}\nd.update(a=1)\nd.setdefault('b', 2)\nd.clear()\nd.has_key('a')\n"
    assert flags(code, api) == {"dict.has_key"}
