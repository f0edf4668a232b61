"""Fetching Python's HTML docs without root: the commands run, the failures explained, the
folder replaced whole, and `find_docs` looking in the cache (fake apt tools, no network)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from codeweaver.sources.python_docs.fetch import (
    FetchError,
    Timeouts,
    fetch_docs,
    replace_folder,
)
from codeweaver.sources.python_docs.sections import candidate_dirs, fetched_dir, find_docs
from tests.unit.sources.python_docs import fake_apt

# No system packages the docs of Python 2.9: whatever the machine has, only the cache counts.
MINOR = "2.9"


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    env: dict[str, str] = {}
    fake_apt.install(tmp_path / "bin", tmp_path / "calls.jsonl", env)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FAKE_DOCS_VERSION", f"{MINOR}.1")
    return tmp_path / "calls.jsonl"


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "python-docs").glob(".partial-*"))


def test_the_package_is_looked_up_downloaded_and_unpacked_into_the_cache(
    log: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    lines: list[str] = []
    fetched = fetch_docs(cache, MINOR, say=lines.append)

    calls = fake_apt.calls(log)
    assert [c["argv"] for c in calls] == [
        ["apt-cache", "show", "--no-all-versions", "python2.9-doc"],
        ["apt-get", "download", "python2.9-doc"],
        [
            "dpkg-deb",
            "-x",
            f"{calls[1]['cwd']}/python2.9-doc_3.11.2-6+deb12u9_all.deb",
            str(Path(str(calls[1]["cwd"])).parent / "tree"),
        ],
    ]
    # Downloaded in a temporary folder of the cache, not wherever setup was started.
    assert Path(str(calls[1]["cwd"])).parent.parent == cache / "python-docs"

    html = cache / "python-docs" / MINOR / "html"
    assert fetched.html_dir == html == fetched_dir(cache, MINOR)
    assert fetched.docs_version == "2.9.1"
    assert fetched.package.download_bytes == fake_apt.DOWNLOAD_BYTES
    assert (html / "tutorial" / "inputoutput.html").is_file()
    assert (html.parent / "copyright").read_text().startswith("Python Software Foundation")
    assert sorted(p.name for p in html.parent.iterdir()) == ["copyright", "html"]  # no .deb
    assert _leftovers(cache) == []
    assert find_docs("2.9.7", cache_dir=cache) == (html.resolve(), "2.9.1")

    # Each phase is told, with its size and time: never a silent wait.
    said = "\n".join(lines)
    assert "python2.9-doc 3.11.2-6+deb12u9: 12.6 MB to download, 72.2 MB unpacked" in said
    assert "downloading python2.9-doc" in said and "downloaded 0.0 MB in" in said
    assert "unpacking python2.9-doc_3.11.2-6+deb12u9_all.deb" in said and "unpacked" in said


def test_an_unknown_package_says_which_docs_the_lists_have_and_downloads_nothing(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_APT", "unknown")
    with pytest.raises(FetchError) as caught:
        fetch_docs(tmp_path / "cache", "3.13")
    message = str(caught.value)
    assert "package lists have no python3.13-doc" in message
    assert "the docs of Python 3.11 only" in message
    assert "CODEWEAVER_PYTHON_DOCS" in message
    assert [c["argv"][0] for c in fake_apt.calls(log)] == ["apt-cache", "apt-cache"]
    assert not (tmp_path / "cache").exists()


def test_no_network_is_explained_and_the_docs_already_there_are_kept(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    before = fetch_docs(cache, MINOR).html_dir
    monkeypatch.setenv("FAKE_APT", "offline")
    with pytest.raises(FetchError) as caught:
        fetch_docs(cache, MINOR)
    message = str(caught.value)
    assert message.startswith("cannot download python2.9-doc: E: Failed to fetch")
    assert "Check the network" in message and "`codeweaver setup` again" in message
    assert "W: Download" not in message  # apt's harmless warning is not the reason
    assert find_docs("2.9.1", cache_dir=cache) == (before.resolve(), "2.9.1")
    assert _leftovers(cache) == []


def test_a_failed_unpacking_leaves_no_half_written_folder(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_APT", "broken")
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match=r"cannot unpack .*not a Debian format archive"):
        fetch_docs(cache, MINOR)
    assert sorted(p.name for p in (cache / "python-docs").iterdir()) == []


def test_a_download_that_hangs_is_stopped_at_its_timeout(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_APT", "hang")
    cache = tmp_path / "cache"
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"`apt-get download python2\.9-doc` took more than"):
        fetch_docs(cache, MINOR, timeouts=Timeouts(download=1.0))
    assert time.monotonic() - started < 20
    download = fake_apt.calls(log)[-1]
    assert download["argv"][0] == "apt-get" and not fake_apt.alive(int(str(download["pid"])))
    assert _leftovers(cache) == []


def test_without_apt_it_says_what_is_missing_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FetchError) as caught:
        fetch_docs(tmp_path / "cache", "3.12")
    assert str(caught.value).startswith("this system has no apt-cache, apt-get, dpkg-deb")
    assert "CODEWEAVER_PYTHON_DOCS to a folder of Python 3.12's HTML docs" in str(caught.value)


@pytest.mark.parametrize("minor", ["../3.11", "3.11 ", "3", "3.11.2"])
def test_only_a_version_names_the_package_and_folder(log: Path, tmp_path: Path, minor: str) -> None:
    with pytest.raises(FetchError, match="not a Python version"):
        fetch_docs(tmp_path / "cache", minor)
    assert fake_apt.calls(log) == []


def test_an_incomplete_folder_is_replaced_whole(log: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old = cache / "python-docs" / MINOR
    (old / "html" / "tutorial").mkdir(parents=True)
    (old / "html" / "tutorial" / "stale.html").write_text("half")  # no version file
    assert find_docs("2.9.1", cache_dir=cache) == (None, "")
    fetch_docs(cache, MINOR)
    assert not (old / "html" / "tutorial" / "stale.html").exists()
    assert find_docs("2.9.1", cache_dir=cache)[1] == "2.9.1"
    assert sorted(p.name for p in (cache / "python-docs").iterdir()) == [MINOR]


def test_replacing_keeps_the_old_folder_when_the_new_one_cannot_be_moved_in(
    tmp_path: Path,
) -> None:
    target = tmp_path / "3.11"
    target.mkdir()
    (target / "kept").write_text("old")
    with pytest.raises(OSError):
        replace_folder(tmp_path / "missing", target)
    assert (target / "kept").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["3.11"]


def test_folders_left_by_killed_runs_are_removed_once_old(log: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache" / "python-docs"
    stale, recent = root / ".partial-2.9-dead", root / ".partial-2.9-running"
    for folder in (stale, recent):
        folder.mkdir(parents=True)
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    fetch_docs(tmp_path / "cache", MINOR)
    assert not stale.exists() and recent.exists()  # another run may be using the recent one


def test_the_cache_is_looked_at_after_the_system_folders_with_the_same_minor_only(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    dirs = candidate_dirs("3.11.7", cache)
    assert dirs[0] == Path("/usr/share/doc/python3.11/html")
    assert dirs[-1] == cache / "python-docs" / "3.11" / "html"
    html = fetched_dir(cache, MINOR)
    shutil.copytree(fake_apt.FIXTURE, html)  # the 3.11.2 docs, in the 2.9 folder
    assert find_docs("2.9.1", cache_dir=cache) == (None, "")
    # Without a cache folder given, only the system's folders are looked at.
    assert all(str(d).startswith("/usr/share/doc/") for d in candidate_dirs("3.12.0"))
    # An explicit folder (CODEWEAVER_PYTHON_DOCS) is the only place looked at.
    assert find_docs("2.9.1", tmp_path / "nowhere", cache_dir=cache) == (None, "")
