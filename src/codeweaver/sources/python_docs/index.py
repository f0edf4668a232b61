"""Build, cache, load and query the BM25 index of Python's prose docs.

Cache layout: `<cache_dir>/python_docs/<fingerprint[:32]>/` holds `manifest.json`
(written last), `sections.jsonl` and `bm25/` (bm25s arrays, no pickle). The fingerprint
covers the docs folder, its version, the name, size and time of every indexed page and the
reading caps, so upgrading the docs package rebuilds the index and nothing else does.

Tokens: `index_files.doc_words` with Python's name as a stopword. A section's heading
counts `TITLE_BOOST` times, the headings above it once, then its text. Queries are
answered precision first (`index_files.PrecisionFirstBm25`, with the npm docs' coverage
bar and a higher score bar measured on CoNaLa by
`codeweaver_eval.bench.python_docs_bar`).
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path

import bm25s

from codeweaver.sources.index_files import (
    PrecisionFirstBm25,
    doc_words,
    open_or_build,
)
from codeweaver.sources.python_docs.sections import (
    MAX_TEXT_CHARS,
    MIN_TEXT_CHARS,
    PARTS,
    DocSection,
    doc_pages,
    read_sections,
)
from codeweaver.words import doc_search_stopwords
from codeweaver.words.patterns import DOC_SEARCH_WORD

logger = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import

#: (phase description, done, total).
ProgressCallback = Callable[[str, int, int], None]
FORMAT_VERSION = 1
BM25_K1 = 1.0
BM25_B = 0.4
TITLE_BOOST = 2
SCORE_HALF_POINT = 0.3
#: Chosen on CoNaLa's even half (top-1 results naming an API the reference answer uses:
#: 0.308 at 0.5, 0.393 at 0.65, with 32 % of questions answered); odd half 0.397.
MIN_SCORE = 0.65
MIN_COVERAGE = 0.6
#: Without the bars: any score above zero (a section sharing no word with the question
#: scores 0 and is no result, even unranked).
ANY_MATCH = 1e-9
STOPWORDS = doc_search_stopwords() | {"python", "python3", "py"}
MANIFEST = "manifest.json"
SECTIONS = "sections.jsonl"
BM25_DIR = "bm25"


class IndexLoadError(RuntimeError):
    """The cached index is missing pieces, stale or unreadable."""


@dataclass(frozen=True)
class IndexInfo:
    fingerprint: str
    section_count: int
    docs_version: str
    html_dir: Path
    built_at: datetime
    seconds: float = 0.0  # how long the build took (0 when loaded from the cache)


def section_tokens(section: DocSection) -> list[str]:
    return (
        doc_words(section.title, STOPWORDS) * TITLE_BOOST
        + doc_words(section.trail, STOPWORDS)
        + doc_words(section.text, STOPWORDS)
    )


def query_tokens(query: str) -> tuple[list[str], list[str]]:
    """(plain words, expansions: whole names, unstemmed forms, dotted word pairs)."""
    plain = list(dict.fromkeys(doc_words(query, STOPWORDS, wholes=False)))
    expansions = doc_words(query, STOPWORDS, names=True)
    low = [w.lower() for w in DOC_SEARCH_WORD.findall(query)]
    expansions += [f"{a}.{b}" for a, b in itertools.pairwise(low) if not {a, b} & STOPWORDS]
    return plain, [t for t in dict.fromkeys(expansions) if t not in plain]


def compute_fingerprint(html_dir: Path, version: str) -> str:
    """Changes when the docs change (a new package version) or the reading rules do."""
    digest = sha256()
    rules = [FORMAT_VERSION, PARTS, MIN_TEXT_CHARS, MAX_TEXT_CHARS, TITLE_BOOST, BM25_K1, BM25_B]
    digest.update(json.dumps([str(html_dir), version, rules]).encode())
    for page in doc_pages(html_dir):
        try:
            stat = page.stat()
        except OSError:
            continue
        digest.update(
            f"\n{page.relative_to(html_dir)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
        )
    return digest.hexdigest()


class PythonDocsIndex:
    """Sections in memory, aligned with their BM25 retriever (None when there are none)."""

    def __init__(self, info: IndexInfo, sections: list[DocSection], retriever: object) -> None:
        self.info = info
        self.sections = sections
        self._matcher = (
            PrecisionFirstBm25(
                retriever,
                len(sections),
                half_point=SCORE_HALF_POINT,
                min_score=MIN_SCORE,
                min_coverage=MIN_COVERAGE,
            )
            if retriever is not None
            else None
        )
        # The same scores without the bars, for a caller that judges relevance itself.
        self._unbarred = (
            PrecisionFirstBm25(
                retriever,
                len(sections),
                half_point=SCORE_HALF_POINT,
                min_score=ANY_MATCH,
                min_coverage=0.0,
            )
            if retriever is not None
            else None
        )

    def query(
        self, text: str, limit: int, min_score: float | None = None, *, bar: bool = True
    ) -> list[tuple[DocSection, float]]:
        """Up to `limit` (section, score in [0, 1)) passing the precision-first bar;
        `bar=False`: every section sharing a word with the question, best first."""
        matcher = self._matcher if bar else self._unbarred
        if matcher is None:
            return []
        plain, extra = query_tokens(text)
        found = matcher.matches(plain, extra, limit, min_score if bar else None)
        return [(self.sections[i], score) for i, score in found]


def build_index(
    html_dir: Path,
    version: str,
    target: Path,
    fingerprint: str,
    progress: ProgressCallback | None = None,
) -> IndexInfo:
    """Read the docs and write a complete index into the (new) folder `target`."""
    started = time.perf_counter()

    def on_page(done: int, total: int) -> None:
        if progress is not None and (done % 20 == 0 or done == total):
            progress(f"Reading Python {version}'s docs", done, total)

    sections = read_sections(html_dir, on_page)
    target.mkdir(parents=True, exist_ok=False)
    if sections:
        retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        retriever.index([section_tokens(s) or [s.title.lower()] for s in sections],
                        show_progress=False)  # fmt: skip
        retriever.save(str(target / BM25_DIR), show_progress=False)
    with (target / SECTIONS).open("w", encoding="utf-8") as handle:
        for section in sections:
            handle.write(json.dumps(section.to_dict(), ensure_ascii=False) + "\n")
    built_at = datetime.now(UTC)
    manifest = {
        "format": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "section_count": len(sections),
        "docs_version": version,
        "html_dir": str(html_dir),
        "built_at": built_at.isoformat(),
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    seconds = time.perf_counter() - started
    logger.info(
        "indexed %d sections of Python %s's docs in %.1f s", len(sections), version, seconds
    )
    return IndexInfo(fingerprint, len(sections), version, html_dir, built_at, seconds)


def load_index(path: Path, fingerprint: str) -> PythonDocsIndex:
    """A cached index; `IndexLoadError` if anything is missing, stale or unreadable."""
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION or manifest.get("fingerprint") != fingerprint:
            raise IndexLoadError(f"index at {path} is for other docs")
        with (path / SECTIONS).open(encoding="utf-8") as handle:
            sections = [DocSection.from_dict(json.loads(line)) for line in handle if line.strip()]
        if int(manifest["section_count"]) != len(sections):
            raise IndexLoadError(f"index at {path} has {len(sections)} sections, not all")
        retriever = None
        if sections:
            retriever = bm25s.BM25.load(str(path / BM25_DIR), load_corpus=False,
                                        show_progress=False)  # fmt: skip
            if int(retriever.scores["num_docs"]) != len(sections):
                raise IndexLoadError(f"index at {path} does not match its sections")
        info = IndexInfo(
            fingerprint,
            len(sections),
            str(manifest["docs_version"]),
            Path(manifest["html_dir"]),
            datetime.fromisoformat(manifest["built_at"]),
        )
    except IndexLoadError:
        raise
    except Exception as exc:  # truncated arrays, bad JSON, missing files...
        raise IndexLoadError(f"cannot load the Python docs index at {path}: {exc}") from exc
    return PythonDocsIndex(info, sections, retriever)


def open_index(
    index_dir: Path, html_dir: Path, version: str, progress: ProgressCallback | None = None
) -> PythonDocsIndex:
    """The cached index of the docs in `html_dir`, built first when missing or stale."""
    fingerprint = compute_fingerprint(html_dir, version)
    loaded, built = open_or_build(
        index_dir,
        fingerprint,
        manifest=MANIFEST,
        load=lambda path: load_index(path, fingerprint),
        build=lambda tmp: build_index(html_dir, version, tmp, fingerprint, progress),
        load_error=IndexLoadError,
        what="Python docs",
    )
    if built is not None:
        loaded.info = IndexInfo(
            fingerprint, built.section_count, version, html_dir, built.built_at, built.seconds
        )
    return loaded
