"""No regular expression in the package backtracks super-linearly.

Every pattern is collected: each module-level compiled one, alone or in a table
(imported, so patterns built from f-strings count too), and each literal passed to a `re`
function anywhere. Patterns a function builds at run time are not: they are escaped
words, but for `older_version`'s, which has its own test below. Two nets:
regexploit reads each pattern for ambiguous repeats (cubic or worse), and a timing run
feeds each one long runs of characters and flags those whose time grows faster than the
input (the quadratic kind regexploit does not see, like a `\\s*` retried at every
position of a run of spaces).
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
import signal
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

import codeweaver

with warnings.catch_warnings():  # regexploit parses with sre_parse, deprecated since 3.11
    warnings.simplefilter("ignore", DeprecationWarning)
    from regexploit.ast.sre import SreOpParser
    from regexploit.redos import find

PACKAGE = Path(codeweaver.__file__).parent

# Patterns whose time may grow faster than their input, and why that is bearable; keyed
# by `module.NAME`, or `path pattern` for a literal. Every entry is quadratic (a search
# that rescans a run from each of its positions), never cubic or exponential: regexploit
# allows none of these.
_ANSWER = "the model's answer, at most CODEWEAVER_MAX_TOKENS tokens: about 0.1 s at worst"
ALLOWED: dict[str, str] = {
    # A fence is an opening one only in context: each try must read on to know.
    "codeweaver.agent.answering.api_citations._FENCED": _ANSWER,
    "codeweaver.agent.answering.code_citations._CODE_BLOCK": _ANSWER,
    "codeweaver.sources.installed_docs.embedding_text._SIGNATURE_SUMMARY": (
        "signatures of the installed packages' own documentation"
    ),
}

# Which positional argument holds the flags, per `re` function.
_FLAGS_AT = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2}
_FLAGS_AT |= {"finditer": 2, "split": 3, "sub": 4, "subn": 4}
_ANCHORED = {"match", "fullmatch"}


@dataclass(frozen=True)
class Found:
    """A pattern, where it is, and how it is run (`search` unless only ever anchored)."""

    where: str
    pattern: re.Pattern[str]
    how: str = "search"
    literal_in: str = ""  # the file of a literal, which names it without a line number

    @property
    def key(self) -> str:
        """The allow-list's name: stable while lines move above a literal."""
        return f"{self.literal_in} {self.pattern.pattern}" if self.literal_in else self.where

    def run(self, text: str) -> object:
        fn: Callable[[str], object] = getattr(self.pattern, self.how)
        return fn(text)


def _flags(node: ast.expr) -> int:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "re"
    ):
        return int(getattr(re, node.attr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    raise ValueError(ast.unparse(node))


def _constants(tree: ast.Module) -> dict[str, str]:
    """Names bound to one string literal anywhere in a file (`pattern = r"…"`)."""
    seen: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            seen.setdefault(node.targets[0].id, set()).add(node.value.value)
    return {name: next(iter(values)) for name, values in seen.items() if len(values) == 1}


def _literal_calls() -> Iterator[Found]:
    """`re.<fn>("literal", …)` anywhere in the package's source, the literal written in
    the call or bound to a name in the same file."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _FLAGS_AT
                and node.args
            ):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                pattern = first.value
            elif isinstance(first, ast.Name) and first.id in constants:
                pattern = constants[first.id]
            else:
                continue  # built at run time, mostly from escaped words
            name = node.func.attr
            flags_at = _FLAGS_AT[name]
            flag_nodes = [kw.value for kw in node.keywords if kw.arg == "flags"]
            flag_nodes += node.args[flags_at : flags_at + 1]
            flags = _flags(flag_nodes[0]) if flag_nodes else 0
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            how = name if name in _ANCHORED else "search"
            relative = str(path.relative_to(PACKAGE.parent))
            yield Found(where, re.compile(pattern, flags), how, relative)


def _module_patterns() -> Iterator[Found]:
    """Compiled patterns at module level, in modules that compile any."""
    for info in pkgutil.walk_packages([str(PACKAGE)], "codeweaver."):
        if info.name.endswith("__main__"):
            continue
        relative = info.name.removeprefix("codeweaver.").replace(".", "/")
        source = PACKAGE / f"{relative}.py"
        if not source.exists():
            source = PACKAGE / relative / "__init__.py"
        if "re.compile(" not in source.read_text(encoding="utf-8"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            # A pattern, or one in a table of them (`((pattern, replacement), …)`).
            inside = value.values() if isinstance(value, dict) else value
            nested = inside if isinstance(inside, (list, tuple, type({}.values()))) else ()
            items = [value, *nested, *(i for n in nested if isinstance(n, tuple) for i in n)]
            for item in items:
                if isinstance(item, re.Pattern) and isinstance(item.pattern, str):
                    yield Found(f"{info.name}.{name}", item)


@functools.cache
def patterns() -> list[Found]:
    """Every pattern once (imported when a test first asks, not when tests are collected)."""
    found: dict[tuple[str, int, str], Found] = {}
    for item in [*_module_patterns(), *_literal_calls()]:
        key = (item.pattern.pattern, item.pattern.flags, item.how)
        found.setdefault(key, item)
    return list(found.values())


def test_the_collection_sees_the_package() -> None:
    """The scan reads both kinds of pattern, so an empty report means something."""
    wheres = {item.where for item in patterns()}
    assert len(patterns()) > 200
    assert "codeweaver.agent.rules.guard._SEPARATOR" in wheres
    assert any(where.startswith("codeweaver/kb/loaders.py:") for where in wheres)


def _regexploit(pattern: re.Pattern[str]) -> list[str]:
    parsed = SreOpParser().parse_sre(pattern.pattern, pattern.flags)
    return [f"starriness {r.starriness}: {r.example()}" for r in find(parsed)]


def test_regexploit_finds_no_redos() -> None:
    report = {
        item.where: found
        for item in patterns()
        if item.key not in ALLOWED and (found := _regexploit(item.pattern))
    }
    assert report == {}


def test_regexploit_would_report_the_old_heading_patterns() -> None:
    """The net catches the kind of pattern that hung the npm docs build and the router."""
    assert _regexploit(re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$"))
    assert _regexploit(re.compile(r"^(?:hi)[\s!.?~^]*(?:ㅎ+|ㅋ+|\^\^)*[\s!.?~]*$"))


# Runs of these, closed by a character that spoils the match, reach the usual traps:
# spaces before an optional mark, an unclosed bracket or fence, a word that never ends
# in the suffix a pattern wants.
_UNITS = (
    " ", "\t", " \t", "\n", " \n", "a", "a ", "e", "ab", "Aa", "A", "1", "1.", "a.", "a_",
    "__", "a-", "a.b", "a/", "x,", "E1", "#", "# ", "=", "-", "- ", "*", "`", "``",
    "(", "[", "![", "[a](", "<", "<a", "</", "<!--", "{", "{@link a ", ":", "::", "/",
    "\\", "'", '"', ". ", "?", "? ", "!", "@", "$", "0x", "a=", "and ", "http://",
    " | ", " ; ", "source ", "가", "가 ", "및 ", "ㅎ",
)  # fmt: skip
_FRAMES = (("", "!"), ("# a", "b"), ("a", "\x00"), ("", ""))
_SIZE = 3000  # characters: a quadratic pattern takes milliseconds, a linear one microseconds
_SUSPECT_SECONDS = 0.004
_TIMEOUT_SECONDS = 0.5


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow


def _seconds(item: Found, text: str) -> float:
    """Seconds for one run, the timeout's when it takes longer (the regex engine checks
    for signals as it backtracks)."""
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT_SECONDS)
    start = time.perf_counter()
    try:
        item.run(text)
    except _TooSlow:
        return _TIMEOUT_SECONDS
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - start


def _text(frame: tuple[str, str], unit: str, size: int) -> str:
    prefix, suffix = frame
    return prefix + unit * (size // len(unit)) + suffix


def _best(item: Found, frame: tuple[str, str], unit: str, size: int) -> float:
    """The best of three runs (a busy machine only ever adds time); a timeout at once."""
    best = _TIMEOUT_SECONDS
    for _ in range(3):
        best = min(best, _seconds(item, _text(frame, unit, size)))
        if best >= _TIMEOUT_SECONDS:
            break
    return best


def super_linear(item: Found) -> str | None:
    """A description of the first input whose time grows faster than its length: it
    times out, or more than doubles at each of two doublings (so that one slow moment of
    the machine cannot make a linear pattern look quadratic, which quadruples)."""
    for unit in _UNITS:
        for frame in _FRAMES:
            if _seconds(item, _text(frame, unit, _SIZE)) < _SUSPECT_SECONDS:
                continue
            times = [_best(item, frame, unit, _SIZE)]
            for size in (2 * _SIZE, 4 * _SIZE):
                if times[-1] >= _TIMEOUT_SECONDS:
                    break
                times.append(_best(item, frame, unit, size))
                if times[-1] <= 2.8 * times[-2]:
                    break
            if times[-1] >= _TIMEOUT_SECONDS or (len(times) == 3 and times[2] > 2.8 * times[1]):
                shown = " → ".join(f"{t:.3f}s" for t in times)
                return f"{frame[0]!r} + {unit!r} * n + {frame[1]!r}: {shown}"
    return None


@pytest.fixture
def alarm() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_no_pattern_takes_super_linear_time(alarm: None) -> None:
    report = {
        item.where: slow
        for item in patterns()
        if item.key not in ALLOWED and (slow := super_linear(item))
    }
    assert report == {}


def test_the_timing_net_catches_a_quadratic_pattern(alarm: None) -> None:
    """The separator that stalled the event loop is caught, and its fix is not."""
    old = Found("old", re.compile(r"\s*(?:;|\s\|\s)\s*"))
    assert super_linear(old) is not None
    new = Found("new", re.compile(r"(?:(?<!\s)|(?=\S))\s*(?:;|\s\|\s)\s*"))
    assert super_linear(new) is None


def test_the_allow_list_names_real_patterns() -> None:
    keys = {item.key for item in patterns()}
    assert set(ALLOWED) <= keys


def test_a_pattern_built_at_run_time_reads_a_padded_mention_fast() -> None:
    """`older_version` builds its pattern from each installed package's name, so the
    scan above never sees it: a name followed by 8,000 spaces took it 1.1 s."""
    from codeweaver.agent.answering.versions import older_version

    padded = "pandas" + " " * 8000 + "x"
    started = time.perf_counter()
    assert older_version(padded, [("pandas", "2.1.4")]) is None
    assert time.perf_counter() - started < 0.1
    assert older_version("pandas == 1.5.3", [("pandas", "2.1.4")]) == ("pandas", "1.5.3")
    assert older_version("pandas version 0.25", [("pandas", "2.1.4")]) == ("pandas", "0.25")
