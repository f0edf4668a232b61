"""local_code: git-style ignores, ranking, result shape, folders, scan budget and cache."""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path

import pytest

from codeweaver.agent.state import SearchResult
from codeweaver.config import Settings
from codeweaver.sources.base import SourceError, create_source
from codeweaver.sources.code_scan import (
    MAX_FILE_BYTES,
    extract_terms,
    find_git_root,
    list_files,
)
from codeweaver.sources.local_code import (
    ListingCache,
    LocalCodeSource,
    ScanBudget,
    enclosing_name,
    search_code,
)

PARSER = '''\
"""Header parsing."""


def parse_header(raw):
    """Split one `Name: value` header line."""
    if ":" not in raw:
        raise ValueError(f"malformed header line: {raw!r}")
    name, _, value = raw.partition(":")
    return name.strip(), value.strip()


def parse_body(text):
    if not text:
        raise ValueError("empty body")
    return text
'''
PARSE_HEADER_LINE = 4
RAISE_LINE = 7

# Sorts before parser.py and names parse_header more often: only the definition bonus can
# put parser.py first.
HANDLERS = """\
from app.parser import parse_header


class Uploader:
    def headers(self, lines):
        return [parse_header(line) for line in lines]

    def first(self, lines):
        return parse_header(lines[0])

    def last(self, lines):
        return parse_header(lines[-1])
"""

IGNORED = {
    "build/out.py",
    "debug.log",
    "src/app/generated_parser.py",
    "node_modules/lib/index.js",
    ".venv/lib/site.py",
    "venv/lib/site.py",
    "src/app/__pycache__/parser.py",
    "notes/secret_notes.md",
    "src/build/compiled.py",
    "blob.py",
    "big.py",
    ".git/hooks/pre_commit.py",
}
LISTED = {
    "src/app/__init__.py",
    "src/app/parser.py",
    "src/app/handlers.py",
    "src/app/generated_keep.py",
    "docs/guide.md",
}


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = (tmp_path / "repo").resolve()
    (root / ".git" / "info").mkdir(parents=True)
    write(root / ".git" / "info" / "exclude", "secret_notes.md\n")
    write(root / ".git" / "hooks" / "pre_commit.py", "def parse_header(): pass\n")
    write(root / ".gitignore", "build/\n*.log\n")
    write(root / "src" / "app" / ".gitignore", "generated_*.py\n!generated_keep.py\n")
    write(root / "src" / "app" / "__init__.py", "")
    write(root / "src" / "app" / "parser.py", PARSER)
    write(root / "src" / "app" / "handlers.py", HANDLERS)
    write(root / "src" / "app" / "generated_parser.py", "def parse_header(x):\n    pass\n")
    write(root / "src" / "app" / "generated_keep.py", "VERSION = 'kept despite the pattern'\n")
    write(root / "src" / "app" / "__pycache__" / "parser.py", "def parse_header(): pass\n")
    write(root / "docs" / "guide.md", "# Guide\n\nHeaders go through the parser module.\n")
    write(root / "build" / "out.py", "def parse_header(raw):\n    return raw\n")
    write(root / "src" / "build" / "compiled.py", "def parse_header(raw):\n    return raw\n")
    write(root / "debug.log", "parse_header failed: malformed header line\n")
    write(root / "node_modules" / "lib" / "index.js", "function parse_header(raw) {}\n")
    write(root / ".venv" / "lib" / "site.py", "def parse_header(raw): pass\n")
    write(root / "venv" / "lib" / "site.py", "def parse_header(raw): pass\n")
    write(root / "notes" / "secret_notes.md", "parse_header is secret\n")
    write(root / "blob.py", b"def parse_header():\x00\x01\x02 pass\n")
    big = "def parse_header(raw):\n    pass\n" + "# padding\n" * (MAX_FILE_BYTES // 10 + 10)
    write(root / "big.py", big)
    return root


def relative_paths(results: list[SearchResult]) -> set[str]:
    return {r["reference"].removeprefix("code:").rsplit(":", 1)[0] for r in results}


def run(folder: Path, query: str, limit: int = 10) -> list[SearchResult]:
    return search_code([folder], query, limit, ScanBudget(), ListingCache()).results


# --------------------------------------------------------------------------- ignores


def test_listing_follows_gitignores_and_skips_noise(repo: Path) -> None:
    listing = list_files(repo, 5000, time.monotonic() + 10)
    listed = {path.relative_to(repo).as_posix() for path in listing.files}
    assert listed == LISTED | {"blob.py"}  # binary content is only seen when read
    assert not listing.truncated


def test_ignored_files_never_appear_in_results(repo: Path) -> None:
    results = run(repo, "parse_header malformed header line", limit=50)
    found = relative_paths(results)
    assert "src/app/parser.py" in found
    assert not found & IGNORED


def test_configured_subfolder_still_obeys_outer_ignores(repo: Path) -> None:
    # `build/` in the root .gitignore also ignores src/build/ when only src/ is searched.
    write(repo / "src" / "notes" / "secret_notes.md", "parse_header secret\n")
    listing = list_files(repo / "src", 5000, time.monotonic() + 10)
    listed = {path.relative_to(repo / "src").as_posix() for path in listing.files}
    assert "app/parser.py" in listed
    assert "build/compiled.py" not in listed
    assert "notes/secret_notes.md" not in listed


def test_configured_folder_that_git_ignores_is_searched_anyway(repo: Path) -> None:
    listing = list_files(repo / "build", 5000, time.monotonic() + 10)
    assert [path.name for path in listing.files] == ["out.py"]


# --------------------------------------------------------------------------- ranking


def test_file_defining_the_named_function_ranks_first(repo: Path) -> None:
    results = run(repo, "Why does parse_header crash on my input?")
    assert results[0]["reference"] == f"code:src/app/parser.py:{PARSE_HEADER_LINE}"
    assert results[0]["title"] == f"src/app/parser.py:{PARSE_HEADER_LINE} — parse_header"
    assert "src/app/handlers.py" in relative_paths(results)
    scores = [r["score"] or 0.0 for r in results]
    assert scores == sorted(scores, reverse=True)


def test_quoted_error_message_finds_the_raising_line(repo: Path) -> None:
    question = "Upload fails with ValueError: malformed header line: 'X-Trace' — what's wrong?"
    results = run(repo, question)
    assert results[0]["reference"] == f"code:src/app/parser.py:{RAISE_LINE}"
    assert 'raise ValueError(f"malformed header line' in results[0]["snippet"]


def test_message_word_order_decides_between_similar_raises(repo: Path) -> None:
    # Same error name and words on both lines; only the message as a phrase tells them apart
    # (and the distractors sort first, so a tie would put them on top).
    write(repo / "src" / "a_client.py", 'raise ConnectionError("peer reset the connection")\n')
    write(repo / "src" / "a_check.py", 'raise ValueError(f"line {n}: header malformed")\n')
    write(
        repo / "src" / "net.py",
        'def close():\n    raise ConnectionError("connection reset by peer")\n',
    )
    exact = run(repo, "ConnectionError: connection reset by peer")
    assert exact[0]["reference"] == "code:src/net.py:2"
    placeholder = run(repo, "ValueError: malformed header line: 'X-Trace'")
    assert placeholder[0]["reference"] == f"code:src/app/parser.py:{RAISE_LINE}"


def test_rarer_terms_weigh_more(repo: Path) -> None:
    for i in range(5):
        write(repo / "src" / f"r{i}.py", "retry_count = 3\n")
    write(repo / "src" / "zz_budget.py", "budget_limit = 10\n")
    results = run(repo, "retry_count or budget_limit?")
    # Each file holds one of the two names; only the rarer one's clears the bar.
    assert [r["reference"] for r in results] == ["code:src/zz_budget.py:1"]


def test_camel_case_query_matches_snake_case_code(repo: Path) -> None:
    results = run(repo, "is parseBody safe on empty input?")
    assert results
    assert results[0]["reference"].startswith("code:src/app/parser.py:")
    assert "def parse_body(text):" in results[0]["snippet"]


def test_result_carries_path_line_and_numbered_context(repo: Path) -> None:
    result = run(repo, "parse_header", limit=1)[0]
    line = PARSE_HEADER_LINE
    path = repo / "src" / "app" / "parser.py"
    assert result["source"] == "local_code"
    assert result["url"] == f"{path.as_uri()}#L{line}"
    assert re.match(rf"src/app/parser\.py:{line}\b", result["title"])
    snippet_lines = result["snippet"].splitlines()
    numbers = [int(m.group(1)) for m in (re.match(r"^\s*(\d+) \|", s) for s in snippet_lines) if m]
    assert len(numbers) == len(snippet_lines)  # every line is numbered
    assert numbers == list(range(max(1, line - 3), numbers[-1] + 1))
    assert numbers[-1] >= line + 3
    source_lines = PARSER.splitlines()
    assert f"{line:>4} | {source_lines[line - 1]}" in snippet_lines
    assert 0.0 < (result["score"] or 0.0) <= 1.0


def test_nearby_hits_merge_into_one_result(repo: Path) -> None:
    results = run(repo, "parse_header malformed header ValueError", limit=10)
    parser_hits = [r for r in results if r["reference"].startswith("code:src/app/parser.py:")]
    assert len(parser_hits) == 1  # the def (line 4) and the raise (line 7) are one result
    assert "def parse_header" in parser_hits[0]["snippet"]
    assert "malformed header line" in parser_hits[0]["snippet"]


def test_limit_is_respected(repo: Path) -> None:
    for i in range(8):
        code = f"def handler_{i}():\n    return slow_total()\n"
        write(repo / "src" / "mods" / f"mod_{i}.py", code)
    assert len(run(repo, "which slow_total() call is slow?", limit=3)) == 3
    assert len(run(repo, "which slow_total() call is slow?", limit=20)) == 8


def test_plain_words_alone_find_nothing(repo: Path) -> None:
    # StackEval-like question whose words ("header", "line", "value") fill parser.py: it
    # names nothing the code defines or uses, so the code is no answer to it.
    assert run(repo, "How do I split a header line into a name and a value?") == []
    # The same words with the name the code defines find it.
    named = run(repo, "How does parse_header split a header line into a name and a value?")
    assert named[0]["reference"] == f"code:src/app/parser.py:{PARSE_HEADER_LINE}"


async def test_empty_or_contentless_query_returns_nothing(repo: Path) -> None:
    source = LocalCodeSource(str(repo))
    assert await source.search("", "debugging", 5) == []
    assert await source.search("   ", "debugging", 5) == []
    assert await source.search("how do I do it?", "debugging", 5) == []
    assert await source.search("parse_header", "debugging", 5)


def test_query_terms() -> None:
    terms = {t.text: t.kind for t in extract_terms("Why does `loadConfig()` raise KeyError?")}
    assert terms["loadconfig"] == "identifier"
    assert terms["load"] == terms["config"] == "part"
    assert terms["keyerror"] == "error"
    assert "why" not in terms and "does" not in terms
    quoted = extract_terms("TypeError: 'NoneType' object is not subscriptable when I call it")
    phrases = [t.text for t in quoted if t.kind == "phrase"]
    assert phrases == ["nonetype object is not subscriptable"]
    spelled = {t.text: t.forms for t in extract_terms("Is parseBody or read_all safe?")}
    assert spelled["parsebody"] == ("parse_body",)
    assert spelled["read_all"] == ("readall",)


def test_a_name_spelled_otherwise_still_finds_its_definition(repo: Path) -> None:
    write(repo / "src" / "app" / "zz_calls.py", "body = parse_body(text)\nbody2 = parse_body(t)\n")
    results = run(repo, "is parseBody safe on empty input?")
    # The definition outranks a file calling it more often (the definition bonus).
    assert results[0]["reference"] == "code:src/app/parser.py:12"


def test_enclosing_name_is_the_nearest_outer_definition() -> None:
    lines = HANDLERS.splitlines()
    assert enclosing_name(lines, 9) == "first"  # `return parse_header(lines[0])`
    assert enclosing_name(lines, 4) == "Uploader"
    assert enclosing_name(lines, 1) is None  # module level


# --------------------------------------------------------------------------- folders


async def test_missing_folder_is_skipped_with_reason(tmp_path: Path, repo: Path) -> None:
    missing = tmp_path / "nope"
    source = LocalCodeSource(os.pathsep.join([str(repo), str(missing)]))
    status = source.status()
    assert status.state == "skipped"
    assert str(missing) in status.reason
    with pytest.raises(SourceError, match="does not exist"):
        await source.search("parse_header", "debugging", 5)
    assert LocalCodeSource(str(repo)).status().usable


async def test_default_folder_is_git_root_of_cwd(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src" / "app")
    source = LocalCodeSource("")
    status = source.status()
    assert status.state == "ready"
    assert status.reason == str(repo)
    results = await source.search("parse_header", "debugging", 3)
    assert results[0]["reference"] == f"code:src/app/parser.py:{PARSE_HEADER_LINE}"


def test_no_folder_and_no_git_repo_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    if find_git_root(plain.resolve()) is not None:
        pytest.skip("the temporary folder lies inside a git repository")
    monkeypatch.chdir(plain)
    status = LocalCodeSource("").status()
    assert status.state == "skipped"
    assert "git repository" in status.reason


def test_several_folders_are_labelled(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "tool.py", "def parse_header_fast(raw):\n    return raw\n")
    outcome = search_code([repo, other], "parse_header", 10, ScanBudget(), ListingCache())
    titles = {r["title"].split(":")[0] for r in outcome.results}
    assert {"repo/src/app/parser.py", "other/tool.py"} <= titles


def test_registered_factory_uses_settings(repo: Path) -> None:
    source = create_source("local_code", Settings(code_paths=str(repo)))
    assert isinstance(source, LocalCodeSource)
    assert source.status().reason == str(repo)


# --------------------------------------------------------------------------- budget, cache


def test_file_budget_truncates_the_scan(repo: Path, caplog: pytest.LogCaptureFixture) -> None:
    for i in range(30):
        code = f"def helper_{i}():\n    return run_helper({i})\n"
        write(repo / "src" / "many" / f"m{i:02}.py", code)
    full = search_code([repo], "run_helper", 50, ScanBudget(), ListingCache())
    assert not full.truncated
    assert full.files_read > 30
    with caplog.at_level(logging.WARNING, logger="codeweaver.sources.local_code"):
        small = search_code([repo], "run_helper", 50, ScanBudget(max_files=4), ListingCache())
    assert small.truncated
    assert small.files_read <= 4
    assert len(small.results) < len(full.results)
    assert "truncated" in caplog.text


def test_time_budget_truncates_the_scan(repo: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="codeweaver.sources.local_code"):
        outcome = search_code([repo], "parse_header", 5, ScanBudget(max_seconds=0), ListingCache())
    assert outcome.truncated
    assert outcome.files_read == 0
    assert outcome.results == []
    assert "truncated" in caplog.text


def test_file_list_is_cached_for_its_ttl(repo: Path) -> None:
    cached, fresh = ListingCache(ttl=60), ListingCache(ttl=0)
    for cache in (cached, fresh):
        search_code([repo], "parse_header", 5, ScanBudget(), cache)
    write(repo / "src" / "late.py", "def quasar_flux():\n    return 1\n")
    stale = search_code([repo], "quasar_flux", 5, ScanBudget(), cached)
    current = search_code([repo], "quasar_flux", 5, ScanBudget(), fresh)
    assert stale.results == []
    assert [r["reference"] for r in current.results] == ["code:src/late.py:1"]


def test_snippet_lines_are_indented_by_number_width(repo: Path) -> None:
    body = "".join(f"x_{i} = {i}\n" for i in range(1, 1200)) + "def zeta_target():\n    pass\n"
    write(repo / "src" / "long.py", body)
    result = run(repo, "zeta_target", limit=1)[0]
    assert result["reference"] == "code:src/long.py:1200"
    assert "1200 | def zeta_target():" in result["snippet"].splitlines()
    assert result["snippet"].splitlines()[0] == "1197 | x_1197 = 1197"
