"""The knowledge base end to end on a tmp folder: ingest, re-index, list, remove, search."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.kb import KnowledgeBase, indexed_chunk_count
from codeweaver.kb.chunking import chunk_document
from codeweaver.kb.loaders import MAX_FILE_BYTES, LoadError, iter_files, load_document
from codeweaver.memory.store_clients import close_shared_clients
from codeweaver.sources.knowledge_base import EMPTY_REASON, KnowledgeBaseSource
from tests.fakes import FakeClock
from tests.fixtures.kb.make_pdf import make_pdf

GUIDE = """# Zephyr deployment guide

Zephyr is our billing service. To ship a new version, run a canary rollout:
`zephyrctl rollout --canary 5%` sends five percent of traffic to the new pods.
Watch the error budget dashboard for ten minutes before promoting the release.
"""

QUESTIONS = {
    "how do I do a canary rollout of the zephyr billing service": "docs/guide.md",
    "what voltage does the flux capacitor calibration need": "docs/manual.pdf",
    "how long do redis cache entries live before they expire": "docs/sub/caching.rst",
    "which laptop setup steps do new hires follow on their first day": "docs/onboarding.html",
    "function that parses an invoice total from a csv row": "docs/invoices.py",
    "which VPN client should I install to work from home": "docs/vpn.txt",
}


def write_corpus(root: Path) -> Path:
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "guide.md").write_text(GUIDE)
    (docs / "sub" / "caching.rst").write_text(
        "Caching\n=======\n\nRedis cache entries expire after a TTL of 15 minutes; "
        "the session cache keeps entries for 24 hours.\n"
    )
    (docs / "vpn.txt").write_text(
        "Remote work: install the WireGuard VPN client and import the office profile "
        "from the IT portal before working from home.\n"
    )
    (docs / "onboarding.html").write_text(
        "<html><head><title>Onboarding</title><script>var tracking = 1;</script></head>"
        "<body><h1>First day</h1><p>New hires set up their laptop: enable disk encryption, "
        "install Homebrew and request GitHub access.</p></body></html>"
    )
    (docs / "manual.pdf").write_bytes(
        make_pdf(
            [["Flux capacitor calibration", "The calibration needs 1.21 gigawatts of power."]],
            title="Flux Manual",
        )
    )
    (docs / "invoices.py").write_text(
        "import csv\n\n\ndef parse_invoice_total(row: list[str]) -> float:\n"
        '    """Return the invoice total from one CSV row."""\n'
        "    return float(row[3].replace(',', ''))\n"
    )
    # Skipped without a report: dependency and hidden folders, hidden files, unknown types.
    for skipped in ("node_modules/pkg/readme.md", ".git/notes.md", ".hidden/x.md", ".env.md"):
        (docs / skipped).parent.mkdir(parents=True, exist_ok=True)
        (docs / skipped).write_text("# should never be indexed")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    # Reported as failed: a binary file with a text extension, a corrupt PDF, a huge file.
    (docs / "blob.txt").write_bytes(bytes(range(256)) * 8)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    (docs / "huge.txt").write_bytes(b"a" * (MAX_FILE_BYTES + 1))
    return docs


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    yield Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    close_shared_clients()


@pytest.fixture
def indexed(settings: Settings, tmp_path: Path) -> tuple[KnowledgeBase, Path]:
    docs = write_corpus(tmp_path / "corpus")
    kb = KnowledgeBase(settings)
    kb.add([docs])
    return kb, docs


def ids_by_path(kb: KnowledgeBase) -> dict[str, set[str]]:
    grouped: dict[str, set[str]] = defaultdict(set)
    for pid, payload in kb.collection.scroll(fields=["path"]):
        grouped[payload["path"]].add(pid)
    return grouped


def test_ingest_reports_every_file(settings: Settings, tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "corpus")
    phases: list[tuple[str, int, int]] = []
    report = KnowledgeBase(settings).add(
        [docs, tmp_path / "missing.md", docs / "logo.png"], progress=lambda *a: phases.append(a)
    )
    by_name = {Path(f.path).name: f for f in report.files}
    added = sorted(f.display_path for f in report.of("added"))
    assert added == sorted(QUESTIONS.values())
    assert all(f.chunks >= 1 for f in report.of("added"))
    reasons = {name: by_name[name].reason for name in ("blob.txt", "broken.pdf", "huge.txt")}
    assert reasons["blob.txt"] == "binary file"
    assert "corrupt or unreadable PDF" in reasons["broken.pdf"]
    assert "larger than 5 MB" in reasons["huge.txt"]
    assert by_name["missing.md"].reason == "not found"
    assert "unsupported file type" in by_name["logo.png"].reason
    assert report.counts() == {
        "added": 6, "updated": 0, "unchanged": 0, "removed": 0, "skipped": 0, "failed": 5,
    }  # fmt: skip
    assert not any("node_modules" in f.path or "/." in f.path for f in report.files)
    # 9 files found in the folder + logo.png given by name; the missing path is not a file.
    assert phases[:2] == [("scanning", 0, 0), ("scanning", 10, 10)]
    assert phases[-1] == ("indexing", 10, 10)
    assert [f.display_path for f in report.files] == sorted(f.display_path for f in report.files)
    assert report.to_dict()["counts"]["failed"] == 5


def test_list_files_with_chunk_counts(indexed: tuple[KnowledgeBase, Path]) -> None:
    kb, _docs = indexed
    files = kb.list_files()
    assert [f.display_path for f in files] == sorted(QUESTIONS.values())
    titles = {f.display_path: f.title for f in files}
    assert titles["docs/guide.md"] == "Zephyr deployment guide"
    assert titles["docs/sub/caching.rst"] == "Caching"
    assert titles["docs/onboarding.html"] == "Onboarding"
    assert titles["docs/manual.pdf"] == "Flux Manual"
    assert titles["docs/invoices.py"] == "invoices.py"
    assert all(f.chunks >= 1 and f.indexed_at > 0 and len(f.sha256) == 64 for f in files)
    assert sum(f.chunks for f in files) == kb.chunk_count()


@pytest.mark.parametrize("question", sorted(QUESTIONS))
def test_the_right_file_answers(indexed: tuple[KnowledgeBase, Path], question: str) -> None:
    kb, _docs = indexed
    hits = kb.search(question, limit=3)
    assert hits[0].display_path == QUESTIONS[question], [(h.display_path, h.score) for h in hits]


def test_payload_fields(indexed: tuple[KnowledgeBase, Path]) -> None:
    kb, docs = indexed
    (hit,) = kb.search("canary rollout zephyr", limit=1)
    assert hit.path == str((docs / "guide.md").resolve())
    assert hit.chunk_index == 0 and hit.start_line == 1 and hit.page is None
    assert "zephyrctl rollout" in hit.text
    payload = next(p for _, p in kb.collection.scroll() if p["path"] == hit.path)
    assert set(payload) >= {
        "path", "display_path", "chunk_index", "start_line", "title", "text", "sha256", "mtime",
    }  # fmt: skip
    (pdf_hit,) = kb.search("flux capacitor gigawatts", limit=1)
    assert pdf_hit.page == 1


def test_reindex_replaces_only_the_changed_file(indexed: tuple[KnowledgeBase, Path]) -> None:
    kb, docs = indexed
    before = ids_by_path(kb)
    guide = str((docs / "guide.md").resolve())
    (docs / "guide.md").write_text(GUIDE + "\n## Rollback\n\nRun `zephyrctl rollback` to undo.\n")
    report = kb.add([docs])
    counts = report.counts()
    assert counts["updated"] == 1 and counts["added"] == 0 and counts["unchanged"] == 5
    assert report.of("updated")[0].path == guide
    after = ids_by_path(kb)
    for path, ids in before.items():
        if path != guide:
            assert after[path] == ids, path  # untouched files keep their point ids
    assert after[guide].isdisjoint(before[guide])  # old chunks of the changed file are gone
    chunks = {f.path: f.chunks for f in kb.list_files()}
    assert len(after[guide]) == chunks[guide]
    assert any("zephyrctl rollback" in h.text for h in kb.search("how to roll back zephyr", 3))


def test_file_readded_by_name_keeps_its_display_path(
    indexed: tuple[KnowledgeBase, Path],
) -> None:
    kb, docs = indexed
    (docs / "vpn.txt").write_text("Install the WireGuard client; ask IT for a profile.\n")
    report = kb.add([docs / "vpn.txt"])
    assert [(f.display_path, f.outcome) for f in report.files] == [("docs/vpn.txt", "updated")]


def test_unchanged_files_are_skipped(indexed: tuple[KnowledgeBase, Path]) -> None:
    kb, docs = indexed
    before = ids_by_path(kb)
    (docs / "vpn.txt").touch()  # new mtime, same content
    report = kb.add([docs])
    assert report.counts()["unchanged"] == 6 and report.chunks_written == 0
    assert ids_by_path(kb) == before


def test_deleted_file_is_dropped_when_its_folder_is_readded(
    indexed: tuple[KnowledgeBase, Path],
) -> None:
    kb, docs = indexed
    (docs / "vpn.txt").unlink()
    report = kb.add([docs])
    assert [f.display_path for f in report.of("removed")] == ["docs/vpn.txt"]
    assert "docs/vpn.txt" not in {f.display_path for f in kb.list_files()}


def test_remove_file_and_folder(indexed: tuple[KnowledgeBase, Path]) -> None:
    kb, docs = indexed
    report = kb.remove([docs / "guide.md"])
    assert [(f.display_path, f.outcome) for f in report.files] == [("docs/guide.md", "removed")]
    report = kb.remove([docs / "sub", docs / "nothing-here.md"])
    assert [f.display_path for f in report.of("removed")] == ["docs/sub/caching.rst"]
    assert report.of("failed")[0].reason == "not indexed"
    remaining = {f.display_path for f in kb.list_files()}
    assert remaining == set(QUESTIONS.values()) - {"docs/guide.md", "docs/sub/caching.rst"}
    assert all(h.display_path != "docs/guide.md" for h in kb.search("zephyr canary", 5))
    kb.remove([docs])
    assert kb.list_files() == [] and kb.chunk_count() == 0


def test_single_file_and_reindex_after_remove(settings: Settings, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe staging database is called lyra.\n")
    kb = KnowledgeBase(settings)
    assert kb.add([note]).of("added")[0].display_path == "note.md"
    kb.remove([note])
    assert kb.add([note]).counts()["added"] == 1


def test_chunking_keeps_start_lines(tmp_path: Path) -> None:
    path = tmp_path / "long.md"
    sections = [f"## Section {i}\n\n" + f"Paragraph {i} sentence. " * 30 + "\n" for i in range(6)]
    path.write_text("# Long\n\n" + "\n".join(sections))
    doc = load_document(path)
    chunks = chunk_document(doc)
    assert len(chunks) > 3 and [c.index for c in chunks] == list(range(len(chunks)))
    lines = doc.text.splitlines()
    for chunk in chunks:
        assert len(chunk.text) <= 800
        first = chunk.text.splitlines()[0]
        assert first in lines[chunk.start_line - 1], (chunk.start_line, first)


def test_loader_details(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 cr\xe8me".encode("cp1252"))
    assert load_document(latin).text == "café crème"
    empty = tmp_path / "empty.md"
    empty.write_text("  \n")
    with pytest.raises(LoadError, match="no text"):
        load_document(empty)
    blank_pdf = tmp_path / "blank.pdf"
    blank_pdf.write_bytes(make_pdf([[]]))
    with pytest.raises(LoadError, match="no extractable text"):
        load_document(blank_pdf)
    html = tmp_path / "p.html"
    html.write_text("<head><style>p{}</style></head><h2>T</h2><p>Body <b>bold</b></p>")
    assert load_document(html).text == "## T\n\nBody **bold**"
    (tmp_path / "d" / "node_modules").mkdir(parents=True)
    (tmp_path / "d" / "node_modules" / "a.md").write_text("x")
    (tmp_path / "d" / "Makefile").write_text("all:\n\techo hi\n")
    assert [p.name for p in iter_files(tmp_path / "d")] == ["Makefile"]


# -- the source --------------------------------------------------------------------------


def test_source_is_skipped_when_empty_without_loading_the_model(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(*args: object) -> None:
        raise AssertionError("status must not load the embedding model")

    monkeypatch.setattr("codeweaver.embeddings.create_embedder", no_model)
    source = KnowledgeBaseSource(settings)
    status = source.status()
    assert status.state == "skipped" and status.reason == EMPTY_REASON
    assert not settings.qdrant_path.exists()  # the check created nothing
    assert indexed_chunk_count(settings) == 0


def test_source_search_results(indexed: tuple[KnowledgeBase, Path], settings: Settings) -> None:
    _kb, docs = indexed
    source = KnowledgeBaseSource(settings)
    assert source.status().usable
    results = asyncio.run(source.search("canary rollout of zephyr", "learning", 3))
    top = results[0]
    guide = (docs / "guide.md").resolve()
    assert top["title"] == "docs/guide.md — Zephyr deployment guide"
    assert top["url"] == f"{guide.as_uri()}#L1"
    assert top["reference"] == "kb:docs/guide.md#0"
    assert top["source"] == "knowledge_base" and "zephyrctl" in top["snippet"]
    assert all(0.0 <= (r["score"] or 0) <= 1.0 for r in results)
    pdf = asyncio.run(source.search("flux capacitor calibration", "learning", 1))[0]
    assert pdf["url"].endswith("manual.pdf#page=1")


def test_source_status_follows_changes_in_this_process(
    indexed: tuple[KnowledgeBase, Path], settings: Settings
) -> None:
    kb, docs = indexed
    source = KnowledgeBaseSource(settings)
    assert source.status().usable
    kb.remove([docs])
    assert source.status().reason == EMPTY_REASON


def test_source_status_follows_documents_indexed_by_another_process(
    settings: Settings, tmp_path: Path
) -> None:
    from codeweaver.sources.knowledge_base import STATUS_SECONDS

    clock = FakeClock()
    source = KnowledgeBaseSource(settings, clock=clock)
    assert source.status().reason == EMPTY_REASON
    docs = write_corpus(tmp_path / "corpus")
    indexer = textwrap.dedent(
        f"""
        from pathlib import Path
        from codeweaver.config import Settings
        from codeweaver.kb import KnowledgeBase
        data, cache = {str(settings.data_dir)!r}, {str(settings.cache_dir)!r}
        KnowledgeBase(Settings(data_dir=data, cache_dir=cache)).add([Path({str(docs)!r})])
        """
    )
    subprocess.run([sys.executable, "-c", indexer], check=True, timeout=300)
    assert source.status().reason == EMPTY_REASON  # remembered for a while
    clock.now += STATUS_SECONDS  # past the remembered status
    assert source.status().usable


def test_source_is_skipped_when_another_process_holds_the_store(
    indexed: tuple[KnowledgeBase, Path], settings: Settings
) -> None:
    close_shared_clients()  # this process lets go, another takes the folder
    holder = textwrap.dedent(
        f"""
        import sys
        from qdrant_client import QdrantClient
        client = QdrantClient(path={str(settings.qdrant_path)!r})
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        impatient = settings.model_copy(update={"store_wait": 0.3})
        status = KnowledgeBaseSource(impatient).status()
        assert status.state == "skipped"
        assert "does not share it" in status.reason and "QDRANT_URL" in status.reason
        assert str(status).startswith("skipped: ")
    finally:
        child.communicate("", timeout=30)
