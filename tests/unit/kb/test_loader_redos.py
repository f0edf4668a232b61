"""A hostile Markdown heading cannot hang `index add`.

`# a`, 3,000 spaces and `b` once made the title's regex backtrack cubically: minutes on
one 3 KB file, and no other file of the folder was indexed.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TypeVar

import pytest

from codeweaver.config import Settings
from codeweaver.kb import KnowledgeBase
from codeweaver.kb.loaders import load_document
from codeweaver.memory.store_clients import close_shared_clients
from tests.unit.kb.helpers import FakeEmbedder

T = TypeVar("T")
HOSTILE = "# a" + " " * 3000 + "b\n\ntext\n"


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow


def within(seconds: float, call: Callable[[], T]) -> tuple[T, float]:
    """`call()` and its seconds, failing at `seconds` rather than running on: the regex
    engine checks for signals as it backtracks, so the alarm stops even a cubic one."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.perf_counter()
    try:
        return call(), time.perf_counter() - started
    except _TooSlow:
        raise AssertionError(f"still running after {seconds} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    yield KnowledgeBase(settings, embedder=FakeEmbedder(settings.embeddings))
    close_shared_clients()


def test_index_add_reads_a_hostile_heading_and_the_rest_of_the_folder(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "notes.md").write_text(HOSTILE)
    (folder / "good.md").write_text("# Good\n\nok\n")
    report, seconds = within(10, lambda: kb.add([folder]))
    assert [(f.display_path, f.outcome) for f in report.files] == [
        ("d/good.md", "added"),
        ("d/notes.md", "added"),
    ]
    titles = {f.path: f.title for f in kb.list_files()}
    assert titles[str(folder / "good.md")] == "Good"
    assert titles[str(folder / "notes.md")].startswith("a   ")
    assert seconds < 5


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("# a" + " " * 3000 + "b", "a" + " " * 3000 + "b"),
        ("## Usage" + " \t" * 3000 + "#" * 3000 + " " * 3000, "Usage"),
        ("#" + " " * 3000, ""),  # a heading of spaces only is an empty title
        ("   #" + "\t" * 3000 + "C# notes", "C# notes"),
    ],
)
def test_a_title_is_read_in_linear_time(tmp_path: Path, heading: str, title: str) -> None:
    path = tmp_path / "t.md"
    path.write_text(heading + "\n\nbody\n")
    document, seconds = within(5, lambda: load_document(path))
    assert document.title == (title or "t.md")[:200]
    assert seconds < 0.5
