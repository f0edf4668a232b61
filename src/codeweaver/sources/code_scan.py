"""The local code source's machinery: walking a tree as git would, line matching and scoring.

The query's terms come from `code_scan_terms` (`extract_terms`, named here for
`local_code`). Everything here is synchronous and pure apart from reading files;
`local_code` runs it in a thread and turns the ranked hits into results.
"""

from __future__ import annotations

import bisect
import logging
import math
import os
import re
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from codeweaver.sources.code_scan_terms import Term
from codeweaver.sources.code_scan_terms import extract_terms as extract_terms
from codeweaver.words.patterns import CODE_SEARCH_WORD

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF_BYTES = 8192
# Never searched, ignored or not: VCS data, dependencies, environments and caches.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", ".nox"}
)  # fmt: skip
_EXTENSIONS_TEXT = """
    py pyi pyx pxd js jsx mjs cjs ts tsx vue svelte java kt kts scala groovy go rs c h cc cpp
    cxx hpp hh hxx cs fs swift m mm rb php pl pm lua r jl dart ex exs erl hrl clj cljs hs
    ml mli elm zig nim sh bash zsh fish ps1 bat cmd sql graphql gql proto thrift html htm css
    scss sass less xml xsd json jsonc json5 yaml yml toml ini cfg conf properties gradle cmake
    mk md rst txt adoc tex tf hcl nix"""
TEXT_EXTENSIONS = frozenset(_EXTENSIONS_TEXT.split())
TEXT_FILENAMES = frozenset(
    {"makefile", "dockerfile", "gemfile", "rakefile", "procfile", "jenkinsfile", "vagrantfile",
     "justfile", "containerfile"}
)  # fmt: skip
# Generated or bulky files whose matches would only be noise.
SKIP_FILENAMES = frozenset(
    {"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock",
     "cargo.lock", "composer.lock", "gemfile.lock"}
)  # fmt: skip


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a `.git` (a folder, or a file in
    worktrees and submodules)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def is_text_name(name: str) -> bool:
    lowered = name.lower()
    if lowered in SKIP_FILENAMES or lowered.endswith((".min.js", ".min.css")):
        return False
    suffix = lowered.rpartition(".")[2] if "." in lowered.lstrip(".") else ""
    return suffix in TEXT_EXTENSIONS or lowered in TEXT_FILENAMES


# --------------------------------------------------------------------------- walking


@dataclass(frozen=True)
class _Rules:
    """One ignore file: a path relative to the walk root becomes `prepend + path[len(strip):]`
    before matching, so each file's patterns stay relative to its own folder."""

    spec: GitIgnoreSpec
    strip: str
    prepend: str


def _load_rules(file: Path, strip: str = "", prepend: str = "") -> _Rules | None:
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    spec = GitIgnoreSpec.from_lines(lines)
    return _Rules(spec, strip, prepend) if spec.patterns else None


def _ignored(rules: Sequence[_Rules], rel: str) -> bool:
    # Deeper files override shallower ones, the last matching pattern of a file wins.
    for rule in reversed(rules):
        decision = rule.spec.check_file(rule.prepend + rel[len(rule.strip) :]).include
        if decision is not None:
            return decision
    return False


def _outer_rules(root: Path) -> list[_Rules]:
    """`.git/info/exclude`, then the `.gitignore` files between the git root and `root`
    (`root`'s own is read by the walk). None when git ignores `root` itself: a folder the
    user configured explicitly is searched even so."""
    git_root = find_git_root(root)
    if git_root is None:
        return []
    inner = root.relative_to(git_root).parts
    found: list[tuple[int, _Rules | None]] = [
        (0, _load_rules(git_root / ".git" / "info" / "exclude", prepend=_joined(inner)))
    ]
    for depth in range(len(inner)):
        gitignore = git_root.joinpath(*inner[:depth], ".gitignore")
        found.append((depth, _load_rules(gitignore, prepend=_joined(inner[depth:]))))
    rules = [(depth, rule) for depth, rule in found if rule is not None]
    for level in range(1, len(inner) + 1):
        # Whether git ignores the folder `inner[:level]`, asking the deepest rules first.
        for depth, rule in reversed(rules):
            if depth < level:
                decision = rule.spec.check_file(_joined(inner[depth:level])).include
                if decision is not None:
                    if decision:
                        logger.debug("local_code: %s is ignored by git; searching it", root)
                        return []
                    break
    return [rule for _, rule in rules]


def _joined(parts: Sequence[str]) -> str:
    return "".join(f"{part}/" for part in parts)


@dataclass
class Listing:
    """The searchable files of one folder, in breadth-first order (shallow files first)."""

    files: list[Path]
    truncated: str = ""  # why the walk stopped early, if it did
    elapsed: float = 0.0


def list_files(root: Path, max_files: int, deadline: float) -> Listing:
    """Walk `root` as git would (nested `.gitignore` files and `.git/info/exclude`), keeping
    text files of at most `MAX_FILE_BYTES`; stop at `max_files` files or `deadline`
    (`time.monotonic()`)."""
    started = time.monotonic()
    listing = Listing([])
    queue: deque[tuple[Path, str, tuple[_Rules, ...]]] = deque(
        [(root, "", tuple(_outer_rules(root)))]
    )
    while queue:
        if time.monotonic() >= deadline:
            listing.truncated = "time budget spent"
            break
        folder, rel, rules = queue.popleft()
        own = _load_rules(folder / ".gitignore", strip=rel)
        if own is not None:
            rules = (*rules, own)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            logger.debug("local_code: cannot list %s: %s", folder, exc)
            continue
        for entry in entries:
            child = rel + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS and not _ignored(rules, child + "/"):
                        queue.append((Path(entry.path), child + "/", rules))
                elif _wanted_file(entry, rules, child):
                    if len(listing.files) >= max_files:
                        listing.truncated = f"file limit of {max_files} reached"
                        queue.clear()
                        break
                    listing.files.append(Path(entry.path))
            except OSError:  # vanished or unreadable while walking
                continue
    listing.elapsed = time.monotonic() - started
    return listing


def _wanted_file(entry: os.DirEntry[str], rules: Sequence[_Rules], rel: str) -> bool:
    return (
        entry.is_file()
        and is_text_name(entry.name)
        and not _ignored(rules, rel)
        and entry.stat().st_size <= MAX_FILE_BYTES
    )


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is binary (a NUL byte early on), too big or unreadable."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    return data.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- matching

DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function\*?|func(?:\s*\([^)]*\))?|fn|interface|struct|enum|trait|type|"
    r"module|(?:const|let|var)(?=\s+\w+\s*=\s*(?:async\s*)?(?:function|\(|\w+\s*=>)))\s+"
    r"([A-Za-z_$][\w$]*)"
)
_DEFINED_KINDS = ("identifier", "word", "error")
# A phrase found only in part (a message with placeholders filled in) counts at most this.
PARTIAL_PHRASE_CAP = 0.8


@dataclass
class FileMatches:
    """Pass one over a file: per line (1-based), the credit in [0, 1] of each term index."""

    path: Path
    lines: dict[int, dict[int, float]] = field(default_factory=dict)
    defines: dict[int, int] = field(default_factory=dict)
    present: set[int] = field(default_factory=set)


def _phrase_credit(term: Term, line: str) -> float:
    words = CODE_SEARCH_WORD.findall(line)
    if f" {term.text} " in f" {' '.join(words)} ":
        return 1.0
    # Longest in-order run of the phrase's content words on the line (an LCS).
    previous = [0] * (len(words) + 1)
    for wanted in term.content:
        current = [0] * (len(words) + 1)
        for j, word in enumerate(words, 1):
            current[j] = previous[j - 1] + 1 if word == wanted else max(previous[j], current[j - 1])
        previous = current
    matched = previous[-1]
    if matched < 2:
        return 0.0
    return PARTIAL_PHRASE_CAP * (matched / len(term.content)) ** 2


def match_text(path: Path, text: str, terms: Sequence[Term]) -> FileMatches | None:
    """Which terms each line of `text` holds (substring matches, case-insensitive)."""
    lower = text.lower()
    simple = [
        i
        for i, term in enumerate(terms)
        if term.kind != "phrase" and any(form in lower for form in term.spellings)
    ]
    phrases = [
        i
        for i, term in enumerate(terms)
        if term.kind == "phrase" and any(word in lower for word in term.content)
    ]
    if not simple and not phrases:
        return None
    needles = {form for i in simple for form in terms[i].spellings}
    needles |= {w for i in phrases for w in terms[i].content}
    finder = re.compile("|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True)))
    starts = [0, *(m.end() for m in re.finditer("\n", lower))]
    candidates = sorted({bisect.bisect_right(starts, m.start()) for m in finder.finditer(lower)})
    names = {
        form: i for i in simple if terms[i].kind in _DEFINED_KINDS for form in terms[i].spellings
    }
    result = FileMatches(path, present=set(simple))
    for lineno in candidates:
        end = starts[lineno] - 1 if lineno < len(starts) else len(lower)
        line = lower[starts[lineno - 1] : end]
        credits = {i: 1.0 for i in simple if any(form in line for form in terms[i].spellings)}
        for i in phrases:
            credit = _phrase_credit(terms[i], line)
            if credit > 0:
                credits[i] = credit
                if credit == 1.0:
                    result.present.add(i)
        if not credits:
            continue
        result.lines[lineno] = credits
        defined = DEFINITION.match(line)
        if defined and defined.group(1) in names:
            result.defines[lineno] = names[defined.group(1)]
    return result if result.lines else None


# --------------------------------------------------------------------------- ranking

CONTEXT_LINES = 3
# Terms on nearby lines count this much: a `def` and the `raise` under it belong together.
NEIGHBOUR_FACTOR = 0.5
# Terms found in no scanned file are likely prose about the problem: they weigh half in
# the query's mass, so they lower scores less than missing names of the code would.
ABSENT_FACTOR = 0.5
# Score halfway point, as a share of the query's mass (the installed_docs convention).
HALF_POINT = 0.6
CANDIDATES_PER_FILE = 8
# The term kinds that tie a line to the question's own code; plain words do not.
ANCHORS = frozenset({"identifier", "phrase"})


def idf(document_frequency: int, documents: int) -> float:
    """BM25's idf, kept positive: rare terms weigh more."""
    df = document_frequency
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class LineHit:
    path: Path
    line: int
    raw: float
    score: float
    # The line defines a name asked about, or it or a line within `CONTEXT_LINES` holds one
    # of the question's identifiers or quoted phrases: not only its plain words.
    anchored: bool = False


def rank_lines(
    matches: Iterable[FileMatches], terms: Sequence[Term], documents: int
) -> list[LineHit]:
    """Score candidate lines, best first, normalised to [0, 1).

    A line's raw score is the sum of `weight × idf × credit` over the terms on it, plus
    `NEIGHBOUR_FACTOR` of that for terms only within `CONTEXT_LINES` lines, plus the term's
    value again when the line defines (`def`, `class`, `function` …) a name from the query.
    A hit is `anchored` when it defines a name asked about or its window holds one of the
    query's identifiers or phrases (a phrase in part too: a message with its placeholders
    filled in).
    The score is `raw / (raw + HALF_POINT × mass)`, `mass` being the summed `weight × idf`
    of all query terms (absent ones at `ABSENT_FACTOR`): a line holding every term once
    scores 0.625, a definition of the only name asked about ~0.77.
    """
    files = list(matches)
    df = [0] * len(terms)
    for fm in files:
        for i in fm.present:
            df[i] += 1
    n = max(documents, 1)
    value = [term.weight * idf(df[i], n) for i, term in enumerate(terms)]
    mass = sum(v if df[i] else v * ABSENT_FACTOR for i, v in enumerate(value))
    hits: list[LineHit] = []
    for fm in files:
        linenos = sorted(fm.lines)
        scored: list[LineHit] = []
        low = 0
        for lineno in linenos:
            own = fm.lines[lineno]
            raw = sum(value[i] * credit for i, credit in own.items())
            while linenos[low] < lineno - CONTEXT_LINES:
                low += 1
            near: dict[int, float] = {}
            for other in linenos[low:]:
                if other > lineno + CONTEXT_LINES:
                    break
                for i, credit in fm.lines[other].items():
                    if i not in own and credit > near.get(i, 0.0):
                        near[i] = credit
            raw += NEIGHBOUR_FACTOR * sum(value[i] * credit for i, credit in near.items())
            if lineno in fm.defines:
                raw += value[fm.defines[lineno]]
            score = raw / (raw + HALF_POINT * mass) if raw > 0 else 0.0
            anchored = lineno in fm.defines or any(terms[i].kind in ANCHORS for i in (*own, *near))
            scored.append(LineHit(fm.path, lineno, raw, score, anchored))
        scored.sort(key=lambda hit: (-hit.raw, hit.line))
        hits.extend(scored[:CANDIDATES_PER_FILE])
    hits.sort(key=lambda hit: (-hit.raw, len(hit.path.parts), str(hit.path), hit.line))
    return hits
