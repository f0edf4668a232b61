"""A vector-store folder that cannot be written is said to be not writable, never "in use
by another process", by the stores and by the server's start-up.

Tests often run as root, whom file modes do not stop, so then the read-only data folder is
simulated: every write-mode `Path.open` of a file in it fails with EROFS, as on a
read-only mount, and access(2) says it is not writable (as it does for root on such a
mount) unless a test leaves access(2) unaware. As another user the folder is chmod-ed
read-only instead, for real.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from codeweaver.api.app import create_app
from codeweaver.config import Settings
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.memory.vector_store import (
    VectorStoreNotWritableError,
    close_vector_stores,
    count_store_points,
    open_collection,
)
from tests.servers import app_client

ROOT = os.geteuid() == 0
ONE = ["00000000-0000-0000-0000-000000000001"]

MakeReadOnly = Callable[..., None]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    yield Settings(
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        store_wait=0.3,  # a folder found "locked" is given up quickly
        enabled_sources="none",
        cache_mode="semantic",  # the service opens the vector store as it starts
    )
    close_vector_stores()


def fill(settings: Settings) -> None:
    """A store as earlier runs leave it; then this process lets go of it."""
    collection = open_collection(settings, "cache", "minilm", 4)
    collection.upsert(ONE, np.ones((1, 4), dtype=np.float32), [{"key": "k"}])
    close_vector_stores()


def inside(path: Any, folder: Path) -> bool:
    return Path(os.fsdecode(path)).absolute().is_relative_to(folder)


@pytest.fixture
def make_read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeReadOnly]:
    chmodded: list[tuple[Path, int]] = []

    def make(folder: Path, *, access_knows: bool = True) -> None:
        if not ROOT:
            for path in [folder, *folder.rglob("*")]:
                mode = path.stat().st_mode
                chmodded.append((path, mode))
                path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            return
        real_open = Path.open

        def refusing_open(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if inside(path, folder) and set(mode) & set("wax+"):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real_open(path, mode, *args, **kwargs)

        monkeypatch.setattr(Path, "open", refusing_open)
        if access_knows:
            real_access = os.access

            def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
                if mode & os.W_OK and inside(path, folder):
                    return False
                return real_access(path, mode, *args, **kwargs)

            monkeypatch.setattr(os, "access", access)

    yield make
    for path, mode in reversed(chmodded):
        path.chmod(mode)


def assert_not_writable(error: BaseException, folder: Path) -> None:
    assert isinstance(error, VectorStoreNotWritableError), error
    assert f"the vector store folder {folder} is not writable (" in str(error)
    assert "CODEWEAVER_DATA_DIR" in str(error) and "in use" not in str(error)


@pytest.mark.parametrize("access_knows", [True, False], ids=["read-only-mount", "denied-open"])
def test_a_read_only_qdrant_folder_is_said_to_be_not_writable(
    settings: Settings, make_read_only: MakeReadOnly, access_knows: bool
) -> None:
    fill(settings)
    folder = Path(settings.qdrant_path).resolve()
    make_read_only(folder, access_knows=access_knows)
    with pytest.raises(Exception) as opening:
        open_collection(settings, "cache", "minilm", 4)
    assert_not_writable(opening.value, folder)
    # What `codeweaver index list` and the knowledge-base source ask first.
    with pytest.raises(Exception) as counting:
        count_store_points(settings, "cache")
    assert_not_writable(counting.value, folder)


def test_the_server_says_so_in_one_line_and_in_health(
    settings: Settings, make_read_only: MakeReadOnly, caplog: pytest.LogCaptureFixture
) -> None:
    fill(settings)
    folder = Path(settings.qdrant_path).resolve()
    make_read_only(folder)
    caplog.set_level(logging.ERROR)
    llm = ScriptedChatModel(script={})
    with app_client(create_app(settings, llm=llm)) as api:
        deadline = time.monotonic() + 20
        body = api.get("/api/health").json()
        while not body["problems"] and time.monotonic() < deadline:
            time.sleep(0.1)
            body = api.get("/api/health").json()
    assert body["status"] == "degraded"
    (problem,) = body["problems"]
    assert problem.startswith(f"the service could not start: the vector store folder {folder}")
    assert "is not writable" in problem and "in use" not in problem
    said = [r for r in caplog.records if "is not writable" in r.getMessage()]
    assert [(r.name, r.levelno) for r in said] == [("codeweaver.api.startup", logging.ERROR)]
    assert said[0].exc_info is None  # one line, no traceback
