"""The exact-match answer cache on SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from codeweaver.memory.cache import CacheStoreError, ExactAnswerCache, normalise_question
from tests.fakes import docs


def test_store_and_lookup_by_normalised_key(tmp_path: Path) -> None:
    cache = ExactAnswerCache(tmp_path / "c.sqlite")
    cache.store("How do I read a file, line by line?", "Use open().", docs(2), "m")
    hit = cache.lookup("how do i read a file line by line")
    assert hit is not None and hit.answer == "Use open()." and hit.sources == docs(2)
    assert cache.lookup("how do i write a file line by line") is None
    assert cache.stats().hits == 1


def test_persists_across_instances(tmp_path: Path) -> None:
    ExactAnswerCache(tmp_path / "c.sqlite").store("q one", "a", [], "m")
    assert ExactAnswerCache(tmp_path / "c.sqlite").lookup("Q ONE") is not None


def test_ttl_expiry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ExactAnswerCache(tmp_path / "c.sqlite", ttl_seconds=60)
    now = [1000.0]
    monkeypatch.setattr("codeweaver.memory.cache.time.time", lambda: now[0])
    cache.store("q", "a", [], "m")
    now[0] += 59
    assert cache.lookup("q") is not None
    now[0] += 2
    assert cache.lookup("q") is None
    assert cache.stats().entries == 0


def test_forget_list_clear(tmp_path: Path) -> None:
    cache = ExactAnswerCache(tmp_path / "c.sqlite")
    cache.store("first", "a", [], "m")
    cache.store("second", "b", [], "m")
    assert {e.question for e in cache.entries()} == {"second", "first"}
    assert cache.forget("FIRST")
    assert not cache.forget("first")
    assert cache.clear() == 1
    assert cache.stats().entries == 0


def test_empty_answers_and_keys_are_not_stored(tmp_path: Path) -> None:
    cache = ExactAnswerCache(tmp_path / "c.sqlite")
    cache.store("q", "   ", [], "m")
    cache.store("???", "a", [], "m")
    assert cache.stats().entries == 0


def test_corrupted_file_gives_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheStoreError, match="cannot be opened"):
        ExactAnswerCache(path)
    assert path.read_bytes().startswith(b"this is not")  # nothing destroyed


def test_concurrent_writes(tmp_path: Path) -> None:
    cache = ExactAnswerCache(tmp_path / "c.sqlite")

    def write(offset: int) -> None:
        for i in range(50):
            cache.store(f"question {offset + i}", "a", [], "m")

    threads = [threading.Thread(target=write, args=(n * 100,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.stats().entries == 100


def test_normalisation() -> None:
    assert normalise_question("  How do I… use ＡＰＩ?? ") == "how do i use api"
