"""installed_docs hybrid ranking: fusion, exact names, package prior, threshold, vectors file.

The small index holds real documentation: copies of the stdlib's `json`, `glob`, `fnmatch` and
`textwrap` sources, and the verbatim first paragraphs of pandas' `DataFrame.duplicated`,
`DataFrame.apply`, `Index.duplicated` and numpy's `recfunctions.find_duplicates` docstrings.
Questions are CoNaLa intents (../shared/data/retrieval/conala/conala-train.json), cited by
position and question_id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from codeweaver.embeddings.base import EmbeddingError, Vectors, l2_normalise
from codeweaver.sources.base import SourceError
from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    RankingOptions,
    ranking,
)
from codeweaver.sources.installed_docs.exact import STRONG, WEAK, mentioned_packages, query_names
from codeweaver.sources.installed_docs.popularity import popularity_weights
from codeweaver.sources.installed_docs.vectors import VECTORS, VECTORS_META

PANDAS_FRAME = '''
class DataFrame:
    """Two-dimensional, size-mutable, potentially heterogeneous tabular data."""

    def duplicated(self, subset=None, keep="first"):
        """Return boolean Series denoting duplicate rows.

        Rows are considered duplicated when the same values appear more than
        once across the requested columns. Considering certain columns is
        optional.
        """

    def apply(self, func, axis=0, raw=False, result_type=None, args=(), **kwargs):
        """Apply a function along an axis of the DataFrame.

        Objects passed to the function are Series objects whose index is
        either the DataFrame's index (``axis=0``) or the DataFrame's columns
        (``axis=1``).
        """
'''
PANDAS_INDEX = '''
class Index:
    """Immutable sequence used for indexing and alignment."""

    def duplicated(self, keep="first"):
        """Indicate duplicate index values.

        Duplicated values are indicated as ``True`` values in the resulting
        array. Either all duplicates, all except the first, or all except the
        last occurrence of duplicates can be indicated.
        """
'''
NUMPY_RECFUNCTIONS = '''
def find_duplicates(a, key=None, ignoremask=True, return_index=False):
    """Find the duplicates in a structured array along a given key"""
'''


def _write_dist(site: Path, name: str, version: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = [f"{rel},," for rel in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


@pytest.fixture(scope="module")
def options(tmp_path_factory: pytest.TempPathFactory) -> CollectorOptions:
    root = tmp_path_factory.mktemp("docs")
    stdlib = root / "stdlib"
    real = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(real / "json", stdlib / "json", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("glob.py", "fnmatch.py", "textwrap.py"):
        shutil.copy(real / name, stdlib / name)
    site = root / "site"
    _write_dist(
        site,
        "pandas",
        "2.2.3",
        {
            "pandas/__init__.py": "from pandas.core.api import DataFrame, Index\n",
            "pandas/core/__init__.py": "",
            "pandas/core/api.py": "from pandas.core.frame import DataFrame\n"
            "from pandas.core.indexes.base import Index\n",
            "pandas/core/frame.py": PANDAS_FRAME,
            "pandas/core/indexes/__init__.py": "",
            "pandas/core/indexes/base.py": PANDAS_INDEX,
        },
    )
    _write_dist(
        site,
        "numpy",
        "2.1.0",
        {"numpy/__init__.py": "", "numpy/lib/__init__.py": "",
         "numpy/lib/recfunctions.py": NUMPY_RECFUNCTIONS},
    )  # fmt: skip
    return CollectorOptions(
        include_builtin_modules=False, include_topics=False, stdlib_dir=stdlib, paths=(site,)
    )


class FakeEmbedder:
    """Bag-of-words vectors (a word's hash picks its dimension): cheap and deterministic."""

    name = "fake-bow"
    dimension = 64

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts: list[str]) -> Vectors:
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                out[row, hashlib.sha256(word.encode()).digest()[0] % self.dimension] += 1.0
        return l2_normalise(out)


def _source(
    index_dir: Path, options: CollectorOptions, embedder: FakeEmbedder, **ranking_options: bool
) -> InstalledDocsSource:
    return InstalledDocsSource(
        index_dir,
        options=options,
        embedder=lambda: embedder,
        ranking=RankingOptions(**ranking_options),
    )


def _names(source: InstalledDocsSource, query: str, k: int = 5) -> list[str]:
    return [
        r["reference"].partition(":")[2].rpartition("@")[0] for r in source.search_sync(query, k)
    ]


# --------------------------------------------------------------------------- names in questions


def test_query_names_on_real_intents() -> None:
    leaves = frozenset({"apply", "system", "today", "date", "zip", "split", "duplicated"})
    # CoNaLa position 1263, question_id 34962104: a call spelled out is a strong name.
    names = query_names("Pandas: How can I use the apply() function for a single column?", leaves)
    assert [(n.leaf, n.strength) for n in names] == [("apply", STRONG)]
    # CoNaLa position 345, question_id 21822054: a dotted name keeps its qualified form.
    (system,) = query_names("How to force os.system() to use bash instead of shell", leaves)
    assert (system.leaf, system.qualified, system.root) == ("system", "os.system", "os")
    # CoNaLa position 5, question_id 13704860: an English word that is also an API is weak.
    assert [(n.leaf, n.strength) for n in query_names("zip lists in python", leaves)] == [
        ("zip", WEAK)
    ]
    # CoNaLa position 12, question_id 17352321: "splitting" is the weak name `split`.
    assert [n.leaf for n in query_names("Python splitting string by parentheses", leaves)] == [
        "split"
    ]
    # CoNaLa position 1904, question_id 22918212: "Duplicated" is English (as "duplicate"),
    # so only a weak name; "Pandas" names a package, never the API `tqdm.pandas`.
    names = query_names(
        "Fastest Way to Drop Duplicated Index in a Pandas DataFrame",
        leaves | {"pandas"},
        packages=frozenset({"pandas"}),
    )
    assert [(n.leaf, n.strength) for n in names] == [("duplicated", WEAK)]
    # CoNaLa position 704, question_id 14925239: `getattr` is not English, a strong name;
    # position 230, question_id 31465002: so is `findall`.
    query = "Python: How to get attribute of attribute of an object with getattr?"
    assert [(n.leaf, n.strength) for n in query_names(query, frozenset({"getattr"}))] == [
        ("getattr", STRONG)
    ]
    query = "Python regex findall alternation behavior"
    assert [(n.leaf, n.strength) for n in query_names(query, frozenset({"findall"}))] == [
        ("findall", STRONG)
    ]


def test_mentioned_packages_on_real_intents() -> None:
    tops = frozenset({"pandas", "numpy", "json", "glob", "re", "bs4", "string"})
    # CoNaLa position 8, question_id 18594469.
    named, missing = mentioned_packages("Normalizing a pandas DataFrame by row", tops)
    assert named == {"pandas"} and not missing
    # CoNaLa position 20, question_id 19035186: selenium is known but not installed.
    assert mentioned_packages("How to select element with Selenium Python xpath", tops) == (
        frozenset(),
        True,
    )
    # CoNaLa position 15, question_id 31958637: a synonym names the package.
    named, _ = mentioned_packages("BeautifulSoup - search by text inside a tag", tops)
    assert named == {"bs4"}
    # CoNaLa position 6, question_id 13331419: "string" is English, not the `string` module.
    assert mentioned_packages("Prepend the same string to all items in a list", tops) == (
        frozenset(),
        False,
    )


# --------------------------------------------------------------------------- ranking


def test_rrf_adds_reciprocal_ranks() -> None:
    fused = np.zeros(4)
    ranking._add_list(fused, np.array([0.0, 3.0, 1.0, 2.0]), 1.0)
    k = ranking.RRF_K
    assert fused.tolist() == pytest.approx([0.0, 1 / (k + 1), 1 / (k + 3), 1 / (k + 2)])
    ranking._add_list(fused, np.array([0.0, 0.0, 5.0, 0.0]), 2.0)
    # Found by both lists, entry 2 now beats entry 1, first in one list only.
    assert fused[2] == pytest.approx(1 / (k + 3) + 2 / (k + 1)) and fused[2] > fused[1]


def test_named_package_method_beats_another_package(
    tmp_path: Path, options: CollectorOptions
) -> None:
    source = _source(tmp_path / "index", options, FakeEmbedder(), threshold=False)
    # CoNaLa position 1904, question_id 22918212 (the issue's `find_duplicates` confusion).
    top = _names(source, "Fastest Way to Drop Duplicated Index in a Pandas DataFrame", 10)
    # One result per API: `Index.duplicated` and `DataFrame.duplicated` share one place.
    pandas = [n for n in top if n.endswith(".duplicated")]
    assert len(pandas) == 1 and top.index(pandas[0]) < 3, top
    other = "numpy.lib.recfunctions.find_duplicates"
    assert other not in top or top.index(other) > top.index(pandas[0]), top
    # The `api` module re-export publishes `pandas.core.frame.DataFrame` as `pandas.DataFrame`.
    assert "pandas.core.frame.DataFrame.duplicated" not in source.catalogue()


def test_exact_name_list_promotes_the_named_api(tmp_path: Path, options: CollectorOptions) -> None:
    embedder = FakeEmbedder()
    with_exact = _source(tmp_path / "a", options, embedder, threshold=False)
    without = _source(tmp_path / "b", options, embedder, threshold=False, exact=False)
    # CoNaLa position 1263, question_id 34962104.
    query = "Pandas: How can I use the apply() function for a single column?"
    ranked = with_exact._ranker_for(with_exact._ensure(None, retry=True), None, wait=True)
    top = ranked.rank(query)[0]
    assert (top.entry.name, top.exact) == ("pandas.DataFrame.apply", STRONG)
    plain = without._ranker_for(without._ensure(None, retry=True), None, wait=True).rank(query)
    apply_plain = next(c for c in plain if c.entry.name == "pandas.DataFrame.apply")
    assert apply_plain.exact == 0 and apply_plain.fused < top.fused


def test_threshold_keeps_only_confident_results(tmp_path: Path, options: CollectorOptions) -> None:
    embedder = FakeEmbedder()
    index_dir = tmp_path / "index"
    loose = _source(index_dir, options, embedder, threshold=False)
    strict = _source(index_dir, options, embedder)
    loose.ensure_index()
    strict.ensure_index()
    # CoNaLa position 1419, question_id 22625616; position 20, question_id 19035186.
    for query in (
        "listing files from a directory using glob python",
        "How to select element with Selenium Python xpath",
    ):
        every = loose.search_sync(query, 5)
        kept = strict.search_sync(query, 5)
        assert all(0.0 <= (r["score"] or 0) <= 1.0 for r in every)
        expected = [r for r in every if (r["score"] or 0) >= ranking.SCORE_THRESHOLD]
        assert [r["reference"] for r in kept] == [r["reference"] for r in expected]
        # Results come in the ranking's order (answer usage included); their score is the
        # relevance the bar reads, which leaves that prior out.
        ranker = loose._ranker_for(loose._ensure(None, retry=True), None, wait=True)
        ranked = ranker.rank(query)[:5]
        assert [c.entry.name for c in ranked] == [
            r["reference"].split(":")[1].split("@")[0] for r in every
        ]
        orders = [c.order for c in ranked]
        assert orders == sorted(orders, reverse=True)
        assert [round(c.score, 4) for c in ranked] == [r["score"] for r in every]


def test_popularity_prior_counts_calls_in_the_installed_sources(
    tmp_path: Path, options: CollectorOptions
) -> None:
    source = _source(tmp_path / "index", options, FakeEmbedder())
    loaded = source._ensure(None, retry=True)
    # The copied stdlib sources call `dumps` (json's docstrings) more often than `fnmatch`;
    # `duplicated` is only defined (pandas' `def duplicated(`), never called.
    assert loaded.popularity["dumps"] > loaded.popularity["fnmatch"] > 0
    assert "duplicated" not in loaded.popularity
    weights = dict(
        zip(
            [e.name for e in loaded.entries],
            popularity_weights(loaded.entries, loaded.popularity, 0.4),
            strict=True,
        )
    )
    assert weights["json.dumps"] > weights["fnmatch.fnmatch"] > weights["glob.glob"] > 0
    assert max(weights.values()) <= 1.0


# --------------------------------------------------------------------------- vectors file


def test_vectors_built_once_then_reused(tmp_path: Path, options: CollectorOptions) -> None:
    embedder = FakeEmbedder()
    progress: list[tuple[str, int, int]] = []
    first = InstalledDocsSource(
        tmp_path / "index", options=options, embedder=lambda: embedder,
        progress=lambda *a: progress.append(a),
    )  # fmt: skip
    info = first.ensure_index()
    assert embedder.texts == info.entry_count
    assert ("Embedding documents", info.entry_count, info.entry_count) in progress
    meta = json.loads((info.path / VECTORS_META).read_text())
    assert meta["fingerprint"] == info.fingerprint and meta["count"] == info.entry_count
    second = _source(tmp_path / "index", options, embedder)
    second.ensure_index()
    assert embedder.texts == info.entry_count  # loaded, not embedded again
    assert second._ranker is not None and second._ranker.vectors is not None


@pytest.mark.parametrize(
    "damage", ["other-fingerprint", "truncated", "no-meta", "wrong-shape", "all-gone"]
)
def test_stale_or_broken_vectors_are_rebuilt(
    tmp_path: Path, options: CollectorOptions, damage: str
) -> None:
    embedder = FakeEmbedder()
    info = _source(tmp_path / "index", options, embedder).ensure_index()
    meta_path, array_path = info.path / VECTORS_META, info.path / VECTORS
    if damage == "other-fingerprint":
        meta = json.loads(meta_path.read_text())
        meta_path.write_text(json.dumps({**meta, "fingerprint": "0" * 64}))
    elif damage == "truncated":
        array_path.write_bytes(array_path.read_bytes()[:100])
    elif damage == "no-meta":
        meta_path.unlink()
    elif damage == "wrong-shape":
        np.save(array_path, np.zeros((3, embedder.dimension), dtype=np.float32))
    else:  # the vectors and the embedding cache beside the index
        array_path.unlink()
        for cached in (tmp_path / "index").glob(".embedding-cache-*"):
            cached.unlink()
    before = embedder.texts
    again = _source(tmp_path / "index", options, embedder)
    assert again.ensure_index().fingerprint == info.fingerprint
    assert np.load(array_path).shape == (info.entry_count, embedder.dimension)
    assert json.loads(meta_path.read_text())["fingerprint"] == info.fingerprint
    # Rebuilt from the embedding cache; embedded again only when that is gone too.
    embedded = info.entry_count if damage == "all-gone" else 0
    assert embedder.texts == before + embedded
    # CoNaLa position 714, question_id 10973614.
    assert again.search_sync("Convert JSON array to Python list", 5) is not None


def _upgrade(site: Path, name: str, old: str, new: str) -> None:
    (site / f"{name}-{old}.dist-info").rename(site / f"{name}-{new}.dist-info")
    meta = site / f"{name}-{new}.dist-info" / "METADATA"
    meta.write_text(meta.read_text().replace(old, new))


def test_new_fingerprint_reuses_vectors_of_unchanged_entries(
    tmp_path: Path, options: CollectorOptions
) -> None:
    assert options.paths is not None
    site = tmp_path / "site"
    shutil.copytree(options.paths[0], site)
    own = dataclasses.replace(options, paths=(site,))
    embedder = FakeEmbedder()
    first = _source(tmp_path / "index", own, embedder).ensure_index()
    assert embedder.texts == first.entry_count
    # Upgrading a package changes the fingerprint: a new index, but no text to embed again.
    _upgrade(site, "pandas", "2.2.3", "2.2.4")
    second = _source(tmp_path / "index", own, embedder).ensure_index()
    assert second.fingerprint != first.fingerprint and not first.path.exists()
    assert embedder.texts == first.entry_count
    assert np.load(second.path / VECTORS).shape == (second.entry_count, embedder.dimension)
    # A new module: only its entries are embedded.
    (site / "numpy" / "lib" / "recfunctions.py").write_text(
        NUMPY_RECFUNCTIONS + "\n\ndef drop_fields(base, drop_names):\n"
        '    """Return a new array with fields in `drop_names` dropped."""\n'
    )  # numpy 2.1 `recfunctions.drop_fields`, first docstring line
    _upgrade(site, "numpy", "2.1.0", "2.1.1")
    third = _source(tmp_path / "index", own, embedder).ensure_index()
    assert third.entry_count == second.entry_count + 1
    assert embedder.texts == first.entry_count + 1


def test_search_does_not_wait_for_missing_vectors(
    tmp_path: Path, options: CollectorOptions
) -> None:
    embedder = FakeEmbedder()
    source = _source(tmp_path / "index", options, embedder, threshold=False)
    # CoNaLa position 1419, question_id 22625616: answered at once, vectors made meanwhile.
    assert "glob.glob" in _names(source, "listing files from a directory using glob python")
    source._dense.wait(30)
    info = source.ensure_index()
    assert (info.path / VECTORS).is_file() and embedder.texts == info.entry_count


def test_missing_embedder_leaves_search_working(tmp_path: Path, options: CollectorOptions) -> None:
    def broken() -> FakeEmbedder:
        raise EmbeddingError("the all-MiniLM-L6-v2 model files were not found")

    source = InstalledDocsSource(
        tmp_path / "index", options=options, embedder=broken,
        ranking=RankingOptions(threshold=False),
    )  # fmt: skip
    with pytest.raises(SourceError, match=r"without dense vectors.*model files"):
        source.prepare()
    # CoNaLa position 1419, question_id 22625616.
    assert "glob.glob" in _names(source, "listing files from a directory using glob python")
