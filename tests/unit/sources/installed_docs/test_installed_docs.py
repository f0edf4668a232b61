"""installed_docs: collection (ast only), BM25 index cache, rebuilds, results, real stdlib."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeweaver.sources.base import SourceError, create_source
from codeweaver.sources.installed_docs import (
    CollectorOptions,
    IndexInfo,
    InstalledDocsSource,
    RankingOptions,
    collect_entries,
    indexer,
    normalise_score,
    ranking,
    tokenizer,
)

FAKE_API = '''
"""HTTP helpers of the fake package."""

def fetch_data(url: str, timeout: float = 10.0) -> dict:
    """Download a JSON document from a remote URL and decode it into a dictionary.

    The request is retried when the remote server times out.
    """

def _private_helper():
    """Private: must never be indexed."""

class Client:
    """A reusable connection pool for fetching remote documents."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def close(self) -> None:
        """Close every pooled connection of the client."""
'''

FAKE_INIT = '''
"""Fake package used by the installed_docs tests."""
from .api import Client, fetch_data
from ._impl import quantum_flux

raise SystemExit("installed_docs must parse sources, never import them")
'''

FAKE_IMPL = '''
def quantum_flux(level: int) -> int:
    """Compute the quantum flux capacitor level for time travel."""

def hidden_gem():
    """Not re-exported anywhere: must stay out of the index."""
'''

FAKE_TEST = '''
def test_something():
    """A test docstring that must not be indexed: zanzibar."""
'''

OTHER_MOD = '''
def parse_gizmo(text):
    """Parse a gizmo specification string into gizmo parts."""
'''


def _write_dist(
    site: Path,
    name: str,
    version: str,
    files: dict[str, str],
    metadata_extra: str = "",
) -> None:
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{metadata_extra}",
        encoding="utf-8",
    )
    record = [f"{rel},," for rel in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")


def _set_version(site: Path, name: str, old: str, new: str) -> None:
    info = site / f"{name}-{old}.dist-info"
    meta = info / "METADATA"
    meta.write_text(meta.read_text().replace(f"Version: {old}", f"Version: {new}"))
    info.rename(site / f"{name}-{new}.dist-info")


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    _write_dist(
        site,
        "fakepkg",
        "1.0.0",
        {
            "fakepkg/__init__.py": FAKE_INIT,
            "fakepkg/api.py": FAKE_API,
            "fakepkg/_impl.py": FAKE_IMPL,
            "fakepkg/tests/test_api.py": FAKE_TEST,
        },
        "Project-URL: Homepage, https://fake.example\n"
        "Project-URL: Documentation, https://fake.example/docs\n",
    )
    _write_dist(site, "gizmo_tools", "0.3", {"gizmo.py": OTHER_MOD})
    return site


#: These tests are about the index (collection, cache, rebuilds, result fields), so they rank
#: by BM25 and exact names only and return the top k whatever its score: the fake packages'
#: made-up docstrings say nothing about relevance. Vectors and the relevance threshold are
#: tested in tests/unit/sources/test_installed_docs_hybrid.py.
INDEX_ONLY = RankingOptions(dense=False, threshold=False)


def _options(site: Path) -> CollectorOptions:
    return CollectorOptions(
        include_stdlib=False,
        include_builtin_modules=False,
        include_topics=False,
        paths=(site,),
    )


@pytest.fixture()
def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = indexer.build_index

    def counting(*args: Any, **kwargs: Any) -> IndexInfo:
        calls.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(indexer, "build_index", counting)
    return calls


def _index_dirs(index_dir: Path) -> list[Path]:
    return [p for p in index_dir.iterdir() if p.is_dir()]


# --------------------------------------------------------------------------- collection


def test_collects_public_docs_without_importing(site: Path) -> None:
    entries = {e.name: e for e in collect_entries(_options(site))}
    # Re-exported under the package name, with the defining module kept as an alias.
    assert "fakepkg.fetch_data" in entries
    assert entries["fakepkg.fetch_data"].aliases == ("fakepkg.api.fetch_data",)
    assert entries["fakepkg.fetch_data"].signature == (
        "fetch_data(url: str, timeout: float=10.0) -> dict"
    )
    assert entries["fakepkg.Client"].signature == "Client(base_url: str)"
    assert "fakepkg.Client.close" in entries
    # A private module's function is published only through its public re-export.
    assert "fakepkg.quantum_flux" in entries
    assert not any("hidden_gem" in name or "_private" in name for name in entries)
    assert not any("test_something" in name for name in entries)
    assert entries["fakepkg.fetch_data"].version == "1.0.0"
    assert entries["gizmo.parse_gizmo"].package == "gizmo-tools"


def test_tokenizer_splits_identifiers_and_drops_stopwords() -> None:
    tokens = tokenizer.tokenize("The TextIOBase.readline method reads lines", keep_unstemmed=True)
    assert "textiobase.readline" in tokens
    assert {"text", "io", "base", "readline", "read", "line", "lines"} <= set(tokens)
    assert "the" not in tokens
    assert tokenizer.query_tokens("json loads string")[:2] == ["json", "load"]
    assert "json.loads" in tokenizer.query_tokens("json loads string")
    assert "@for" in tokenizer.query_tokens("python for loop")
    assert "@for" not in tokenizer.query_tokens("a library for parsing")


def test_normalise_score_is_monotone_and_bounded() -> None:
    values = [normalise_score(raw, 5.0) for raw in (0.0, 0.5, 3.0, 5.0, 20.0, 1e6)]
    assert values == sorted(values)
    assert values[0] == 0.0 and values[3] == pytest.approx(0.5)
    assert all(0.0 <= v < 1.0 for v in values)


# --------------------------------------------------------------------------- source


async def test_search_results_shape_and_progress(site: Path, tmp_path: Path) -> None:
    progress: list[tuple[str, int, int]] = []
    source = InstalledDocsSource(
        tmp_path / "index",
        options=_options(site),
        progress=lambda *a: progress.append(a),
        ranking=INDEX_ONLY,
    )
    assert source.name == "installed_docs"
    assert source.status().usable

    results = await source.search("download remote json document", "learning", 3)
    assert results, "expected a hit for the fake package"
    top = results[0]
    assert top["reference"] == "fakepkg:fakepkg.fetch_data@1.0.0"
    assert top["title"] == "fakepkg.fetch_data — fakepkg 1.0.0"
    assert top["url"] == "https://fake.example/docs"
    assert top["source"] == "installed_docs"
    assert top["snippet"].startswith("fetch_data(url: str")
    assert "Download a JSON document" in top["snippet"]
    assert top.get("date") is None and top.get("attribution") == ""  # licence unknown
    assert len(results) <= 3
    scores = [r["score"] for r in results]
    assert all(s is not None and 0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]

    gizmo = await source.search("parse gizmo specification", "learning", 5)
    assert gizmo[0]["reference"] == "gizmo-tools:gizmo.parse_gizmo@0.3"
    assert gizmo[0]["url"].startswith("file://") and gizmo[0]["url"].endswith("gizmo.py")

    phases = {phase for phase, _, _ in progress}
    assert {"Parsing installed packages", "Tokenising documents", "Saving the index"} <= phases
    assert all(0 <= done <= total for _, done, total in progress)
    assert ("Saving the index", 1, 1) in progress


async def test_api_pages_by_name_only_from_the_loaded_index(
    site: Path, tmp_path: Path, count_builds: list[str]
) -> None:
    source = InstalledDocsSource(tmp_path / "index", options=_options(site), ranking=INDEX_ONLY)
    assert source.api_pages(["fakepkg.fetch_data"]) == []  # not loaded: never builds it
    assert count_builds == []
    await source.search("download remote json document", "learning", 1)
    pages = source.api_pages(["gizmo.parse_gizmo", "fakepkg.nothing", "fakepkg.fetch_data"])
    assert [(p["reference"], p.get("api")) for p in pages] == [
        ("gizmo-tools:gizmo.parse_gizmo@0.3", "gizmo.parse_gizmo"),
        ("fakepkg:fakepkg.fetch_data@1.0.0", "fakepkg.fetch_data"),
    ]


async def test_blank_query_returns_nothing_without_building(
    site: Path, tmp_path: Path, count_builds: list[str]
) -> None:
    source = InstalledDocsSource(tmp_path / "index", options=_options(site), ranking=INDEX_ONLY)
    assert await source.search("", "learning", 5) == []
    assert await source.search("   \n", "debugging", 5) == []
    assert await source.search("fetch data", "learning", 0) == []
    assert count_builds == []
    assert await source.search("zzqx unknownword", "learning", 5) == []
    assert len(count_builds) == 1


async def test_index_is_reused_then_rebuilt_when_a_version_changes(
    site: Path, tmp_path: Path, count_builds: list[str]
) -> None:
    index_dir = tmp_path / "index"
    first = InstalledDocsSource(
        index_dir, options=_options(site), recheck_interval=0, ranking=INDEX_ONLY
    )
    info = first.ensure_index()
    assert info.entry_count > 0 and info.path.parent == index_dir
    assert len(count_builds) == 1

    # Concurrent searches on a fresh instance: loaded from disk, never rebuilt.
    second = InstalledDocsSource(
        index_dir, options=_options(site), recheck_interval=0, ranking=INDEX_ONLY
    )
    await asyncio.gather(*(second.search("quantum flux", "learning", 2) for _ in range(4)))
    assert second.ensure_index().fingerprint == info.fingerprint
    assert len(count_builds) == 1

    _set_version(site, "fakepkg", "1.0.0", "1.1.0")
    results = await first.search("quantum flux capacitor", "learning", 1)
    assert len(count_builds) == 2
    assert results[0]["reference"] == "fakepkg:fakepkg.quantum_flux@1.1.0"
    new_info = first.ensure_index()
    assert new_info.fingerprint != info.fingerprint
    assert _index_dirs(index_dir) == [new_info.path]  # the stale index was removed


async def test_concurrent_first_searches_build_once(
    site: Path, tmp_path: Path, count_builds: list[str]
) -> None:
    source = InstalledDocsSource(tmp_path / "index", options=_options(site), ranking=INDEX_ONLY)
    batches = await asyncio.gather(*(source.search("gizmo", "learning", 3) for _ in range(5)))
    assert len(count_builds) == 1
    assert all(batch and batch[0]["reference"].startswith("gizmo-tools:") for batch in batches)


@pytest.mark.parametrize("victim", ["bm25/data.csc.index.npy", "entries.jsonl", "manifest.json"])
async def test_corrupted_index_is_rebuilt(
    site: Path, tmp_path: Path, count_builds: list[str], victim: str
) -> None:
    index_dir = tmp_path / "index"
    info = InstalledDocsSource(index_dir, options=_options(site), ranking=INDEX_ONLY).ensure_index()
    target = info.path / victim
    target.write_bytes(target.read_bytes()[: max(1, target.stat().st_size // 3)] + b"\x00garbage")

    source = InstalledDocsSource(index_dir, options=_options(site), ranking=INDEX_ONLY)
    results = await source.search("quantum flux", "learning", 3)
    assert len(count_builds) == 2
    assert results and results[0]["reference"] == "fakepkg:fakepkg.quantum_flux@1.0.0"


async def test_unbuildable_index_raises_source_error(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def broken(options: CollectorOptions, target: Path, *args: object) -> IndexInfo:
        calls.append(target)
        target.mkdir(parents=True)
        (target / "manifest.json").write_text("{not json")
        raise OSError("disk full")

    monkeypatch.setattr(indexer, "build_index", broken)
    source = InstalledDocsSource(tmp_path / "index", options=_options(site), ranking=INDEX_ONLY)
    with pytest.raises(SourceError, match="disk full"):
        await source.search("quantum flux", "learning", 3)
    assert not any(p.name.startswith(".tmp-") for p in (tmp_path / "index").iterdir())
    # Searches fail fast after a failed build; an explicit ensure_index retries.
    with pytest.raises(SourceError, match="disk full"):
        await source.search("quantum flux", "learning", 3)
    assert len(calls) == 1
    with pytest.raises(SourceError):
        source.ensure_index()
    assert len(calls) == 2


async def test_index_corrupted_after_a_rebuild_raises_source_error(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = indexer.build_index
    calls: list[Path] = []

    def corrupting(*args: Any, **kwargs: Any) -> IndexInfo:
        info = real(*args, **kwargs)
        calls.append(info.path)
        (info.path / "entries.jsonl").write_text("{broken")
        return info

    monkeypatch.setattr(indexer, "build_index", corrupting)
    index_dir = tmp_path / "index"
    with pytest.raises(SourceError, match="cannot load index"):
        InstalledDocsSource(index_dir, options=_options(site), ranking=INDEX_ONLY).ensure_index()
    assert len(calls) == 1
    # The next attempt finds the corrupted index, rebuilds it once, and fails again.
    with pytest.raises(SourceError):
        InstalledDocsSource(index_dir, options=_options(site), ranking=INDEX_ONLY).ensure_index()
    assert len(calls) == 2


async def test_empty_collection_raises_source_error(tmp_path: Path) -> None:
    options = CollectorOptions(
        include_stdlib=False,
        include_builtin_modules=False,
        include_topics=False,
        paths=(tmp_path / "nothing-here",),
    )
    source = InstalledDocsSource(tmp_path / "index", options=options)
    with pytest.raises(SourceError):
        await source.search("anything at all", "learning", 3)


def test_status_skipped_when_index_dir_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status = InstalledDocsSource(blocker / "index").status()
    assert status.state == "skipped" and "index" in status.reason


def test_registered_factory_uses_settings_docs_index_dir(tmp_path: Path) -> None:
    from codeweaver.config import Settings

    settings = Settings(cache_dir=tmp_path)
    source = create_source("installed_docs", settings)
    assert isinstance(source, InstalledDocsSource)
    assert source.index_dir == settings.docs_index_dir


# --------------------------------------------------------------------------- real stdlib


@pytest.fixture(scope="module")
def stdlib_source(tmp_path_factory: pytest.TempPathFactory) -> InstalledDocsSource:
    options = CollectorOptions(include_distributions=False)
    # Without vectors: embedding the 7,000 stdlib entries takes minutes (the hybrid ranking's
    # vectors are tested on a small index in tests/unit/sources/).
    source = InstalledDocsSource(
        tmp_path_factory.mktemp("stdlib-index"),
        options=options,
        ranking=RankingOptions(dense=False),
    )
    source.ensure_index()
    return source


def _top(source: InstalledDocsSource, query: str, n: int) -> list[dict[str, Any]]:
    return [dict(r) for r in source.search_sync(query, n)]


def test_stdlib_read_file_line_by_line(stdlib_source: InstalledDocsSource) -> None:
    top = _top(stdlib_source, "How do I read a file line by line in Python?", 5)
    refs = [r["reference"] for r in top]
    assert any(
        word in ref.split("@")[0] for ref in refs for word in ("open", "readline", "fileinput")
    ), refs


def test_stdlib_json_loads(stdlib_source: InstalledDocsSource) -> None:
    top = _top(stdlib_source, "json loads string", 3)
    assert any(r["reference"].startswith("python:json.loads@") for r in top), top
    hit = next(r for r in top if r["reference"].startswith("python:json.loads@"))
    assert hit["url"].endswith("/library/json.html#json.loads")
    assert hit["title"].startswith("json.loads — Python 3.")
    # Scores are calibrated chances of documenting the API an answer uses (no longer a
    # normalised BM25 score): json.loads is the confident first answer.
    assert top[0] is hit or top[0]["reference"] == hit["reference"]
    assert hit["score"] >= ranking.SCORE_THRESHOLD


def test_stdlib_builtins_io_and_topics_are_indexed(stdlib_source: InstalledDocsSource) -> None:
    find: Callable[[str, int], list[str]] = lambda q, n: [  # noqa: E731
        r["reference"] for r in _top(stdlib_source, q, n)
    ]
    assert any(ref.startswith("python:builtins.open@") for ref in find("open builtin file", 5))
    assert any("io.TextIOBase.readline" in ref for ref in find("TextIOBase readline", 3))
    assert find("for loop", 1)[0].startswith("python:topic:for@")
    for_hit = _top(stdlib_source, "for loop", 1)[0]
    assert for_hit["url"].endswith("/reference/compound_stmts.html#for")
    manifest = json.loads((stdlib_source.ensure_index().path / "manifest.json").read_text())
    assert manifest["entry_count"] == stdlib_source.ensure_index().entry_count > 3000


def test_a_builtin_type_page_needs_the_type_spelled_as_code(
    stdlib_source: InstalledDocsSource,
) -> None:
    # CoNaLa question_id 6416131 (answer: `default_data.update(...)`): given `dict()`'s page,
    # the 1.5B model answered with the constructor where the bare model said `update()`.
    refs = [r["reference"] for r in _top(stdlib_source, "add new item to dictionary", 5)]
    assert not any(ref.startswith("python:builtins.dict@") for ref in refs), refs
    spelled = [
        r["reference"] for r in _top(stdlib_source, "dict() constructor keyword arguments", 5)
    ]
    assert any(ref.startswith("python:builtins.dict@") for ref in spelled), spelled


def test_relevance_is_the_fit_without_the_answer_usage_prior(
    stdlib_source: InstalledDocsSource,
) -> None:
    # CoNaLa question_id 5858916 (answer: `any(x in string for x in search)`): answer usage
    # alone lifted `re.findall` to 0.67 for it; the relevance leaves that prior out.
    loaded = stdlib_source._ensure(None, retry=True)
    ranker = stdlib_source._ranker_for(loaded, None, wait=True)
    ranked = ranker.rank("Find array item in a string")
    assert ranked
    for c in ranked:
        plain = ranking.logistic(c.features()[:-1], ranking.RELEVANCE_MODEL_NO_VECTORS)
        if c.entry.name not in ranking._VALUE_TYPES:
            assert c.score == pytest.approx(plain) or c.score == ranking.SCORE_THRESHOLD
        assert c.order == pytest.approx(
            ranking.logistic(c.features(), ranking.SCORE_MODEL_NO_VECTORS)
        )
    assert [c.order for c in ranked] == sorted((c.order for c in ranked), reverse=True)
