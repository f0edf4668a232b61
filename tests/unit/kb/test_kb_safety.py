"""`KnowledgeBase.add/remove` read only what they were given: the report says what was
skipped and why, and stale chunks of what is now skipped go. A fake embedder keeps it fast."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.kb import IndexReport, KnowledgeBase
from codeweaver.kb.scan import NOT_REGULAR, OUT_OF_FOLDER
from codeweaver.memory.store_clients import close_shared_clients
from tests.unit.kb.helpers import FakeEmbedder, deny_scandir, within

SECRET = "root:x:0:0:hunter2"


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    yield KnowledgeBase(settings, embedder=FakeEmbedder(settings.embeddings))
    close_shared_clients()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "passwd").write_text(SECRET + "\n")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nRestart the worker with `qctl bounce`.\n")
    return folder


def stored_text(kb: KnowledgeBase) -> str:
    return "\n".join(str(p.get("text", "")) for _, p in kb.collection.scroll())


def outcomes(report: IndexReport) -> list[tuple[str, str, str]]:
    return [(f.display_path, f.outcome, f.reason) for f in report.files]


def test_symlink_out_of_the_folder_is_not_indexed(kb: KnowledgeBase, docs: Path) -> None:
    (docs / "x.md").symlink_to(docs.parent / "outside" / "passwd")
    report = kb.add([docs])
    assert outcomes(report) == [
        ("d/guide.md", "added", ""),
        ("d/x.md", "skipped", OUT_OF_FOLDER),
    ]
    assert [f.display_path for f in kb.list_files()] == ["d/guide.md"]
    assert SECRET not in stored_text(kb)


def test_file_replaced_by_a_symlink_out_loses_its_chunks(kb: KnowledgeBase, docs: Path) -> None:
    (docs / "x.md").write_text("# X\n\nharmless\n")
    kb.add([docs])
    (docs / "x.md").unlink()
    (docs / "x.md").symlink_to(docs.parent / "outside" / "passwd")
    report = kb.add([docs])
    assert ("d/x.md", "removed", OUT_OF_FOLDER) in outcomes(report)
    assert [f.display_path for f in kb.list_files()] == ["d/guide.md"]


def test_file_replaced_by_a_symlink_inside_is_kept_once(kb: KnowledgeBase, docs: Path) -> None:
    (docs / "copy.md").write_text("# Copy\n")
    kb.add([docs])
    (docs / "copy.md").unlink()
    (docs / "copy.md").symlink_to("guide.md")
    report = kb.add([docs])
    assert ("d/copy.md", "removed", "file was replaced by a symlink") in outcomes(report)
    assert [f.display_path for f in kb.list_files()] == ["d/guide.md"]


def test_fifos_do_not_block_and_are_reported(kb: KnowledgeBase, docs: Path) -> None:
    fifo = docs / "p.md"
    os.mkfifo(fifo)
    report = within(30, lambda: kb.add([docs]), [fifo])
    assert outcomes(report) == [("d/guide.md", "added", ""), ("d/p.md", "skipped", NOT_REGULAR)]
    report = within(30, lambda: kb.add([fifo]), [fifo])
    assert outcomes(report) == [(str(fifo), "skipped", NOT_REGULAR)]


def test_hidden_files_need_include_hidden(kb: KnowledgeBase, docs: Path) -> None:
    (docs / ".env.md").write_text("# Env\n\nTOKEN=abc\n")
    assert [f.display_path for f in kb.add([docs]).of("added")] == ["d/guide.md"]
    added = kb.add([docs], include_hidden=True).of("added")
    assert [f.display_path for f in added] == ["d/.env.md"]


def test_utf16_file_is_indexed(kb: KnowledgeBase, docs: Path) -> None:
    (docs / "wide.txt").write_bytes("Le serveur s'appelle lyra.\n".encode("utf-16"))
    report = kb.add([docs / "wide.txt"])
    assert outcomes(report) == [("wide.txt", "added", "")]
    assert "Le serveur s'appelle lyra." in stored_text(kb)


def test_unreadable_folder_is_reported_and_its_files_kept(
    kb: KnowledgeBase, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (docs / "team").mkdir()
    (docs / "team" / "rota.md").write_text("# Rota\n\nAlice on Mondays.\n")
    kb.add([docs])
    deny_scandir(monkeypatch, docs / "team")
    report = kb.add([docs])
    assert ("d/team", "failed", "permission denied") in outcomes(report)
    assert report.counts()["removed"] == 0  # unreadable is not deleted
    assert [f.display_path for f in kb.list_files()] == ["d/guide.md", "d/team/rota.md"]


@pytest.mark.parametrize("given", ["", " "])
def test_empty_path_indexes_and_removes_nothing(
    kb: KnowledgeBase, docs: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    kb.add([docs])
    monkeypatch.chdir(docs)
    assert outcomes(kb.add([given])) == [(given, "failed", "empty path")]
    assert outcomes(kb.remove([given])) == [(given, "failed", "empty path")]
    assert [f.display_path for f in kb.list_files()] == ["d/guide.md"]
