"""`LocalCodeSource`: searches the user's own code, for debugging and code-review questions.

Folders come from `Settings.code_paths` (separated by `os.pathsep`), else the git
repository holding the working directory. Each search walks them as git would (see
`code_scan.list_files`), reads the text files and scores lines by the query's terms, rarer
terms weighing more (idf over the files read). Scores are `raw / (raw + 0.6 × query mass)`
(see `code_scan.rank_lines`): 0.625 for a line holding every term, higher for the definition
of a name asked about. Only anchored hits at `MIN_SCORE` or more become results: one
sharing plain words with the question ("file", "line") is no sign that the user's code
answers it. A question naming another language than Python reads no code files of other
languages (`languages.foreign_code`).

A search stops after `ScanBudget.max_files` files (default 5000) or `max_seconds` (default
3 s) and logs that it was truncated; file lists are reused for `DEFAULT_LISTING_TTL` (30 s),
so questions in a row do not walk a large tree again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codeweaver.sources.base import McpTool, SourceError, SourceInfo, SourceStatus, register_source
from codeweaver.sources.code_scan import (
    CONTEXT_LINES,
    DEFINITION,
    FileMatches,
    LineHit,
    Listing,
    extract_terms,
    find_git_root,
    list_files,
    match_text,
    rank_lines,
    read_text,
)
from codeweaver.sources.languages import foreign_code, is_foreign
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

SOURCE_NAME = "local_code"
DEFAULT_MAX_FILES = 5000
DEFAULT_MAX_SECONDS = 3.0
DEFAULT_LISTING_TTL = 30.0
# Precision first: a result must be anchored (it defines a name asked about, or holds one
# of the question's identifiers or quoted phrases) and score at least this. Measured with
# `codeweaver_eval.bench.local_code_bar`: of the 392 StackEval questions the rules send
# here (none about the code searched), 21 find a result in this repository and 6 in
# click's, against 392 and 357 with plain words at 0.13; of 80 click fix commits (the
# subject as the question, at the parent commit), 18 find a changed file in the top 5,
# against 40: a question that names nothing in the code now gets no code rather than code
# sharing its words.
MIN_SCORE = 0.45
MAX_HITS_PER_FILE = 3
# Hits whose context windows would touch become one result spanning both.
MERGE_GAP = 2 * CONTEXT_LINES + 1
MAX_SPAN_LINES = 12
MAX_LINE_CHARS = 240
ENCLOSING_LOOKBACK = 400


@dataclass(frozen=True)
class ScanBudget:
    """How much one search may read: at most `max_files` files and `max_seconds` seconds."""

    max_files: int = DEFAULT_MAX_FILES
    max_seconds: float = DEFAULT_MAX_SECONDS


class ListingCache:
    """File lists per folder, reused for `ttl` seconds; one walk per folder at a time."""

    def __init__(self, ttl: float = DEFAULT_LISTING_TTL) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._walking: dict[tuple[Path, int], threading.Lock] = {}
        self._entries: dict[tuple[Path, int], tuple[float, Listing]] = {}

    def get(self, folder: Path, max_files: int, deadline: float) -> Listing:
        key = (folder, max_files)
        with self._lock:
            walking = self._walking.setdefault(key, threading.Lock())
        # A concurrent search of the same folder waits for this walk instead of repeating it.
        with walking:
            with self._lock:
                entry = self._entries.get(key)
            if entry is not None and time.monotonic() - entry[0] < self.ttl:
                return entry[1]
            listing = list_files(folder, max_files, deadline)
            logger.debug(
                "local_code: listed %d files under %s in %.2fs%s",
                len(listing.files),
                folder,
                listing.elapsed,
                f" ({listing.truncated})" if listing.truncated else "",
            )
            with self._lock:
                self._entries[key] = (time.monotonic(), listing)
            return listing

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_SHARED_CACHE = ListingCache()


def resolve_folders(paths: str) -> tuple[list[Path], str]:
    """The folders to search and, when there are none, why (for a skipped status)."""
    entries = [entry.strip() for entry in paths.split(os.pathsep) if entry.strip()]
    if entries:
        folders = [Path(entry).expanduser() for entry in entries]
        missing = [str(folder) for folder in folders if not folder.is_dir()]
        if missing:
            listed = ", ".join(missing)
            return [], f"configured code folder does not exist or is not a folder: {listed}"
        return list(dict.fromkeys(folder.resolve() for folder in folders)), ""
    try:
        root = find_git_root(Path.cwd().resolve())
    except OSError:  # the working directory was removed
        root = None
    if root is None:
        return [], (
            "no code folder configured (CODEWEAVER_CODE_PATHS) and the working directory "
            "is not inside a git repository"
        )
    return [root], ""


@dataclass
class CodeSearch:
    """A search's results and what it cost."""

    results: list[SearchResult] = field(default_factory=list)
    files_read: int = 0
    truncated: list[str] = field(default_factory=list)  # why the scan stopped early
    elapsed: float = 0.0


@dataclass
class _Pick:
    hit: LineHit
    start: int
    end: int


def search_code(
    folders: list[Path],
    query: str,
    limit: int,
    budget: ScanBudget | None = None,
    cache: ListingCache | None = None,
) -> CodeSearch:
    """Search `folders` for `query` (synchronously: run it in a thread)."""
    budget = budget or ScanBudget()
    cache = cache or _SHARED_CACHE
    terms = extract_terms(query)
    if not terms or limit <= 0:
        return CodeSearch()
    foreign = foreign_code(query)
    started = time.monotonic()
    deadline = started + budget.max_seconds
    outcome = CodeSearch()
    matches: list[FileMatches] = []
    owner: dict[Path, Path] = {}
    attempted = 0
    for folder in folders:
        listing = cache.get(folder, budget.max_files, deadline)
        if listing.truncated:
            outcome.truncated.append(f"listing {folder}: {listing.truncated}")
        for path in listing.files:
            if attempted >= budget.max_files or time.monotonic() >= deadline:
                spent = "file limit" if attempted >= budget.max_files else "time budget"
                outcome.truncated.append(f"reading stopped in {folder}: {spent} reached")
                break
            if is_foreign(path, foreign):
                continue
            attempted += 1
            text = read_text(path)
            if text is None:
                continue
            outcome.files_read += 1
            found = match_text(path, text, terms)
            if found is not None:
                matches.append(found)
                owner[path] = folder
    hits = rank_lines(matches, terms, outcome.files_read)
    picks = _pick(hits, limit)
    outcome.results = [
        result
        for pick in picks
        if (result := _to_result(pick, owner[pick.hit.path], len(folders) > 1)) is not None
    ]
    outcome.elapsed = time.monotonic() - started
    if outcome.truncated:
        logger.warning(
            "local_code: scan truncated (%s) after %d files in %.1fs (budget: %d files, "
            "%.1fs); results come from the files read so far",
            "; ".join(outcome.truncated),
            attempted,
            outcome.elapsed,
            budget.max_files,
            budget.max_seconds,
        )
    logger.debug(
        "local_code: %d files read, %d with matches, %d results in %.2fs",
        outcome.files_read,
        len(matches),
        len(outcome.results),
        outcome.elapsed,
    )
    return outcome


def _pick(hits: list[LineHit], limit: int) -> list[_Pick]:
    """The best hits, at most `MAX_HITS_PER_FILE` per file, nearby ones merged."""
    picks: list[_Pick] = []
    for hit in hits:
        if hit.score < MIN_SCORE:
            break  # hits come best first
        if not hit.anchored:
            continue
        same = [pick for pick in picks if pick.hit.path == hit.path]
        near = next((p for p in same if p.start - MERGE_GAP <= hit.line <= p.end + MERGE_GAP), None)
        if near is not None:
            start, end = min(near.start, hit.line), max(near.end, hit.line)
            if end - start <= MAX_SPAN_LINES:
                near.start, near.end = start, end
            continue
        if len(picks) < limit and len(same) < MAX_HITS_PER_FILE:
            picks.append(_Pick(hit, hit.line, hit.line))
    return picks


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def enclosing_name(lines: list[str], line: int) -> str | None:
    """The def/class/function around 1-based `line`, found by indentation (cheap, heuristic)."""
    here = lines[line - 1]
    defined = DEFINITION.match(here)
    if defined:
        return defined.group(1)
    if not here.strip() or _indent(here) == 0:
        return None
    limit = _indent(here)
    for index in range(line - 2, max(-1, line - 2 - ENCLOSING_LOOKBACK), -1):
        text = lines[index]
        stripped = text.strip()
        if not stripped or _indent(text) >= limit:
            continue
        defined = DEFINITION.match(text)
        if defined:
            return defined.group(1)
        if _indent(text) == 0 and not stripped.startswith(("@", "#", "//", "/*", "*")):
            return None  # a top-level statement: the line is not inside a definition
        limit = min(limit, _indent(text))
    return None


def _to_result(pick: _Pick, folder: Path, label_folder: bool) -> SearchResult | None:
    text = read_text(pick.hit.path)
    if text is None:  # gone or changed since it was scanned
        return None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if pick.hit.line > len(lines):
        return None
    first = max(1, pick.start - CONTEXT_LINES)
    last = min(len(lines), pick.end + CONTEXT_LINES)
    width = max(4, len(str(last)))
    snippet = "\n".join(
        f"{number:>{width}} | {lines[number - 1][:MAX_LINE_CHARS]}".rstrip()
        for number in range(first, last + 1)
    )
    relative = pick.hit.path.relative_to(folder).as_posix()
    if label_folder:
        relative = f"{folder.name}/{relative}"
    line = pick.hit.line
    name = enclosing_name(lines, line)
    return SearchResult(
        title=f"{relative}:{line}" + (f" — {name}" if name else ""),
        url=f"{pick.hit.path.as_uri()}#L{line}",
        snippet=snippet,
        source=SOURCE_NAME,
        score=round(pick.hit.score, 4),
        reference=f"code:{relative}:{line}",
    )


class LocalCodeSource:
    """The user's code, searched line by line; folders are resolved at each call, so a
    change of working directory is followed."""

    name = SOURCE_NAME
    offline = True  # the same query always finds the same: see `Source.offline`

    def __init__(
        self,
        paths: str = "",
        *,
        budget: ScanBudget | None = None,
        cache: ListingCache | None = None,
    ) -> None:
        self._paths = paths
        self.budget = budget or ScanBudget()
        self._cache = cache or _SHARED_CACHE

    def folders(self) -> tuple[list[Path], str]:
        return resolve_folders(self._paths)

    def status(self) -> SourceStatus:
        folders, reason = self.folders()
        if reason:
            return SourceStatus("skipped", reason)
        return SourceStatus("ready", ", ".join(str(folder) for folder in folders))

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        if not extract_terms(query) or limit <= 0:
            return []
        folders, reason = self.folders()
        if reason:
            raise SourceError(reason)
        try:
            outcome = await asyncio.to_thread(
                search_code, folders, query, limit, self.budget, self._cache
            )
        except OSError as exc:
            raise SourceError(f"local code search failed: {exc}") from exc
        return outcome.results


@register_source(
    SOURCE_NAME,
    SourceInfo(
        mcp_tool=McpTool(
            "search_code",
            "Search the local code",
            "Search the local repository's own source code. Best for how this project "
            "already does something. Name what you look for (a function, class or variable "
            "name, or a quoted error message): plain words alone find nothing.",
        ),
        offline=True,
    ),
)
def _factory(settings: Settings) -> LocalCodeSource:
    return LocalCodeSource(settings.code_paths)
