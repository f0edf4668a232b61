"""The recorded responses the source tests replay keep to each service's documented shape.

Every JSON fixture under `tests/fixtures/{stackexchange,github,tavily}/` is compared, key by key
and recursively, with its documented counterpart in `tests/fixtures/<service>/documented/`: the
example response the service's documentation shows, or an official client library's recorded
response where the documentation gives none (`documented/SOURCES.md` says which, per file).

A fixture may leave out documented keys; it may never carry a key the documented examples lack at
the same place. When several documented examples describe one fixture, a key is documented if any
of them has it there (their union). A list's elements are compared with the union of the
documented list's elements. `null` on either side is accepted: a nullable field is documented as
`null` in one example and as an object in another.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SERVICES = ("stackexchange", "github", "tavily")


@dataclass(frozen=True)
class Source:
    """A documented example, and where in the fixture it applies (`""` is the whole response)."""

    file: str  # under tests/fixtures/<service>/documented/
    at: str = ""


@dataclass(frozen=True)
class Mapping:
    """A fixture, the JSON path of the item type it records, and its documented counterparts."""

    item: str  # e.g. "items[*]"; "" for a response that is one object (an error body)
    sources: tuple[Source, ...]


SE_QUESTION = (Source("question.json"),)
SE_ANSWER = (Source("answer.json"),)
SE_ERROR = (Source("error.json"),)
GH_SEARCH_CODE = (Source("search_code.json"), Source("search_code_text_match.pygithub.json"))
GH_SEARCH_ISSUES = (
    Source("search_issues.json"),
    Source("search_issues.octokit.json"),
    Source("text_match_metadata.json", at="items[*]"),
)
GH_ISSUE_COMMENTS = (Source("issue_comments.json"), Source("issue_comments.pygithub.json"))
# GitHub's REST reference shows no example body for an error; these are recorded ones.
GH_ERROR = (
    Source("error_401_bad_credentials.pygithub.json"),
    Source("error_403_rate_limit.pygithub.json"),
    Source("error_403_secondary_rate_limit.pygithub.json"),
    Source("error_403_with_status.pygithub.json"),
    Source("error_422_with_status.pygithub.json"),
)
GH_VALIDATION_FAILED = (
    *GH_ERROR,
    Source("error_422_validation_failed.octokit.json"),
    Source("error_422_validation_failed.pygithub.json"),
)
TAVILY_SEARCH = (Source("search.json"), Source("search.tavily-python.json"))
TAVILY_ERROR = (Source("error.json"),)

MAPPING: dict[str, Mapping] = {
    "stackexchange/search_advanced.json": Mapping("items[*]", SE_QUESTION),
    "stackexchange/search_advanced_empty.json": Mapping("items[*]", SE_QUESTION),
    "stackexchange/answers.json": Mapping("items[*]", SE_ANSWER),
    "stackexchange/bad_parameter.json": Mapping("", SE_ERROR),
    "stackexchange/throttle_violation.json": Mapping("", SE_ERROR),
    "github/search_code.json": Mapping("items[*]", GH_SEARCH_CODE),
    "github/search_code_empty.json": Mapping("items[*]", GH_SEARCH_CODE),
    "github/search_issues.json": Mapping("items[*]", GH_SEARCH_ISSUES),
    "github/issue_comments.json": Mapping("[*]", GH_ISSUE_COMMENTS),
    "github/bad_credentials.json": Mapping("", GH_ERROR),
    "github/primary_rate_limit.json": Mapping("", GH_ERROR),
    "github/secondary_rate_limit.json": Mapping("", GH_ERROR),
    "github/validation_failed.json": Mapping("errors[*]", GH_VALIDATION_FAILED),
    "tavily/search_success.json": Mapping("results[*]", TAVILY_SEARCH),
    "tavily/search_empty.json": Mapping("results[*]", TAVILY_SEARCH),
    "tavily/error_401.json": Mapping("", TAVILY_ERROR),
    "tavily/error_429.json": Mapping("", TAVILY_ERROR),
    "tavily/error_432.json": Mapping("", TAVILY_ERROR),
    "tavily/error_433.json": Mapping("", TAVILY_ERROR),
    "tavily/error_500.json": Mapping("", TAVILY_ERROR),
}

# Files in the fixture folders that are not JSON responses, each with the reason it is skipped.
NOT_JSON: dict[str, str] = {
    "stackexchange/error_page.html": "an HTML maintenance page, replayed to test non-JSON replies",
    "tavily/search_truncated.txt": "a deliberately cut-off body, replayed to test parse errors",
    "github/DOCUMENTED.md": "notes on the GitHub fixtures, not a response",
}


# --------------------------------------------------------------------------- shapes


@dataclass
class Shape:
    """What the documented examples show at one place: its kinds, keys and list elements."""

    kinds: set[str] = field(default_factory=set)  # "object", "list", "scalar", "null"
    keys: dict[str, Shape] = field(default_factory=dict)
    item: Shape | None = None  # None: no documented list had an element here


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    return "scalar"


def add(shape: Shape, value: Any) -> None:
    """Fold one documented value into `shape` (the union of every example seen there)."""
    shape.kinds.add(kind(value))
    if isinstance(value, dict):
        for key, child in value.items():
            add(shape.keys.setdefault(key, Shape()), child)
    elif isinstance(value, list):
        for element in value:
            if shape.item is None:
                shape.item = Shape()
            add(shape.item, element)


def steps(path: str) -> list[str]:
    """`"items[*].owner"` as `["items", "[*]", "owner"]`; `""` is the root."""
    out: list[str] = []
    for part in path.split(".") if path else []:
        name, star, _ = part.partition("[*]")
        if name:
            out.append(name)
        if star:
            out.append("[*]")
    return out


def mount(shape: Shape, path: str) -> Shape:
    """The node of `shape` at `path`, creating the objects and lists on the way."""
    node = shape
    for step in steps(path):
        if step == "[*]":
            node.kinds.add("list")
            if node.item is None:
                node.item = Shape()
            node = node.item
        else:
            node.kinds.add("object")
            node = node.keys.setdefault(step, Shape())
    return node


def at_path(shape: Shape, path: str) -> Shape | None:
    node: Shape | None = shape
    for step in steps(path):
        if node is None:
            return None
        node = node.item if step == "[*]" else node.keys.get(step)
    return node


def undocumented(value: Any, shape: Shape, where: str = "$") -> list[str]:
    """Every place where `value` has a key, or a kind of value, the documented examples lack."""
    if value is None or shape.kinds <= {"null"}:
        return []  # nullable: null here, or documented only as null
    found = kind(value)
    if found not in shape.kinds:
        shown = ", ".join(sorted(shape.kinds))
        return [f"{where}: {found} where the documented examples have {shown}"]
    problems: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            if key not in shape.keys:
                problems.append(f"{where}.{key}: not in the documented examples")
            else:
                problems.extend(undocumented(child, shape.keys[key], f"{where}.{key}"))
    elif isinstance(value, list) and value:
        if shape.item is None:
            return [f"{where}: has elements, but no documented example shows one"]
        for index, element in enumerate(value):
            problems.extend(undocumented(element, shape.item, f"{where}[{index}]"))
    return problems


def load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def documented_shape(service: str, sources: tuple[Source, ...]) -> Shape:
    shape = Shape()
    for source in sources:
        add(mount(shape, source.at), load(FIXTURES / service / "documented" / source.file))
    return shape


# --------------------------------------------------------------------------- tests


def fixture_files() -> list[str]:
    return sorted(
        f"{service}/{path.name}"
        for service in SERVICES
        for path in (FIXTURES / service).iterdir()
        if path.is_file()
    )


@pytest.mark.parametrize("name", fixture_files())
def test_every_fixture_file_is_mapped_or_skipped_by_name(name: str) -> None:
    assert name in MAPPING or name in NOT_JSON, (
        f"{name} has no documented counterpart: add it to MAPPING (or, if it is not a JSON "
        "response, to NOT_JSON with the reason)"
    )


@pytest.mark.parametrize("name", sorted(NOT_JSON))
def test_non_json_fixtures_are_skipped(name: str) -> None:
    path = FIXTURES / name
    assert path.is_file(), f"{name} is listed as a non-JSON fixture but missing"
    # The list must not hide a JSON response from the comparison.
    with pytest.raises(ValueError):
        json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(MAPPING))
def test_fixture_keys_are_documented(name: str) -> None:
    entry = MAPPING[name]
    path = FIXTURES / name
    assert path.is_file(), f"{name} is mapped but missing"
    service = name.split("/")[0]
    shape = documented_shape(service, entry.sources)

    item = at_path(shape, entry.item)
    assert item is not None and (entry.item == "" or item.kinds), (
        f"no documented example shows the item type at {entry.item!r} for {name}"
    )
    problems = undocumented(load(path), shape)
    assert not problems, f"{name} carries keys no documented example has:\n" + "\n".join(problems)


def test_documented_examples_are_json_and_listed_in_sources() -> None:
    for service in SERVICES:
        folder = FIXTURES / service / "documented"
        sources = (folder / "SOURCES.md").read_text(encoding="utf-8")
        for path in sorted(folder.glob("*.json")):
            load(path)
            assert f"`{path.name}`" in sources, f"{service}/documented/SOURCES.md lacks {path.name}"


def test_every_mapped_documented_example_exists() -> None:
    for name, entry in MAPPING.items():
        service = name.split("/")[0]
        for source in entry.sources:
            assert (FIXTURES / service / "documented" / source.file).is_file(), source.file


def test_an_invented_key_is_reported_with_its_path() -> None:
    # The review's finding: code search's repository is the minimal repository, without
    # `license`. Put it back on a copy and the comparison must name it.
    recorded = load(FIXTURES / "github" / "search_code.json")
    invented = copy.deepcopy(recorded)
    invented["items"][0]["repository"]["license"] = {"key": "mit", "spdx_id": "MIT"}
    shape = documented_shape("github", GH_SEARCH_CODE)
    assert undocumented(recorded, shape) == []
    assert undocumented(invented, shape) == [
        "$.items[0].repository.license: not in the documented examples"
    ]


def test_nulls_and_omissions_are_accepted_but_kinds_are_checked() -> None:
    shape = Shape()
    add(shape, {"a": {"b": 1}, "c": None, "d": [{"e": 1}], "f": []})
    assert undocumented({"a": None, "c": {"x": 1}, "d": [{"e": 2}, {}]}, shape) == []
    assert undocumented({"a": "text"}, shape) == [
        "$.a: scalar where the documented examples have object"
    ]
    assert undocumented({"f": [{"g": 1}]}, shape) == [
        "$.f: has elements, but no documented example shows one"
    ]
