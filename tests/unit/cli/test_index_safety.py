"""`codeweaver index …` reads only what it was given and prints what files say safely:
the outside tester's reproductions D2, D11, D16, D17, D18 through Typer's CliRunner."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import codeweaver.embeddings
from codeweaver.cli.index_cmds import index_app
from codeweaver.config import Settings
from codeweaver.memory.store_clients import close_shared_clients
from tests.unit.kb.helpers import FakeEmbedder, deny_scandir, within

SECRET = "root:x:0:0:hunter2"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    data = tmp_path / "data"
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(data))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env

    def fake(name: str, settings: Settings) -> FakeEmbedder:
        return FakeEmbedder(name)

    monkeypatch.setattr(codeweaver.embeddings, "create_embedder", fake)
    yield data
    close_shared_clients()


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "passwd").write_text(SECRET + "\n")
    (tmp_path / ".env").write_text("API_KEY=hunter2\n")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nRestart the worker with `qctl bounce`.\n")
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(index_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def listed() -> list[str]:
    code, out, _ = run("list", "--json")
    assert code == 0, out
    return [f["display_path"] for f in json.loads(out)]


def by_path(out: str) -> dict[str, tuple[str, str]]:
    return {f["display_path"]: (f["outcome"], f["reason"]) for f in json.loads(out)["files"]}


# -- D2 ----------------------------------------------------------------------------------


def test_d2_file_symlinks_out_of_the_folder_are_skipped(env: Path, d: Path) -> None:
    (d / "x.md").symlink_to(d.parent / "outside" / "passwd")
    (d / "settings.txt").symlink_to("../.env")
    code, out, _ = run("add", "d")
    assert code == 0, out
    assert "added  d/guide.md (1 chunk)" in out
    assert "skipped  d/x.md — symlink out of the indexed folder" in out
    assert "skipped  d/settings.txt — symlink out of the indexed folder" in out
    assert "added  d/x.md" not in out and "added  d/settings.txt" not in out
    assert listed() == ["d/guide.md"]
    code, out, _ = run("add", "d", "--json")
    assert by_path(out)["d/x.md"] == ("skipped", "symlink out of the indexed folder")


def test_symlink_given_as_the_root_is_followed(env: Path, d: Path, tmp_path: Path) -> None:
    (tmp_path / "docs-link").symlink_to(d)
    code, out, _ = run("add", "docs-link")
    assert code == 0 and "added  d/guide.md (1 chunk)" in out


# -- hidden files --------------------------------------------------------------------------


def test_hidden_files_only_with_include_hidden_or_by_name(env: Path, d: Path) -> None:
    (d / ".env.md").write_text("# Env\n\nTOKEN=abc\n")
    (d / ".notes").mkdir()
    (d / ".notes" / "todo.md").write_text("# Todo\n\nship it\n")
    (d / ".git").mkdir()
    (d / ".git" / "info.md").write_text("# Git internals\n")
    code, out, _ = run("add", "d")
    assert code == 0 and ".env.md" not in out and ".notes" not in out
    code, out, _ = run("add", "d", "--include-hidden")
    assert code == 0
    assert "added  d/.env.md" in out and "added  d/.notes/todo.md" in out
    assert ".git" not in out  # version-control folders stay out even then
    run("remove", "d")
    code, out, _ = run("add", "d/.env.md")
    assert code == 0 and "added  .env.md" in out  # named by the user: indexed


# -- D17 ---------------------------------------------------------------------------------


def test_d17_fifo_does_not_block(env: Path, d: Path) -> None:
    fifo = d / "p.md"
    os.mkfifo(fifo)
    code, out, _ = within(30, lambda: run("add", "d/p.md"), [fifo])
    assert code == 1  # nothing given could be indexed
    assert "skipped  d/p.md — not a regular file" in out
    code, out, _ = within(30, lambda: run("add", "d", "--json"), [fifo])
    assert code == 0 and by_path(out)["d/p.md"] == ("skipped", "not a regular file")


# -- D18 ---------------------------------------------------------------------------------


def test_d18_utf16_file_is_indexed(env: Path, d: Path) -> None:
    (d / "wide.md").write_bytes("# Wide\n\nThe staging database is lyra.\n".encode("utf-16"))
    code, out, _ = run("add", "d/wide.md")
    assert code == 0 and "added  wide.md (1 chunk)" in out
    code, out, _ = run("list")
    assert "Wide" in out


def test_d18_unreadable_folder_is_reported(
    env: Path, d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (d / "locked").mkdir()
    (d / "locked" / "a.md").write_text("# A\n")
    deny_scandir(monkeypatch, d / "locked")
    code, out, _ = run("add", "d")
    assert code == 0 and "failed  d/locked — permission denied" in out
    code, out, _ = run("add", "d", "--json")
    assert by_path(out)["d/locked"] == ("failed", "permission denied")


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads a chmod 000 folder anyway; "
    "test_d18_unreadable_folder_is_reported simulates the error",
)
def test_d18_chmod_000_folder_is_reported(env: Path, d: Path) -> None:
    locked = d / "locked"
    locked.mkdir()
    (locked / "a.md").write_text("# A\n")
    locked.chmod(0)
    try:
        code, out, _ = run("add", "d")
    finally:
        locked.chmod(0o755)
    assert code == 0 and "failed  d/locked — permission denied" in out


# -- D16 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["add", "remove"])
@pytest.mark.parametrize("given", ["", "  "])
def test_d16_empty_path_is_refused(env: Path, d: Path, command: str, given: str) -> None:
    os.chdir(d)  # the folder an empty path used to mean
    code, out, err = run(command, given)
    assert code == 2 and out == ""
    assert "error: empty path given" in err
    assert not env.exists()  # nothing was indexed, nothing opened


# -- D11 ---------------------------------------------------------------------------------

HOSTILE_TITLE = "T \x1b]0;HIJACK\x07\x1b[2J [/] [red]x[/red]"


def test_d11_titles_and_paths_are_printed_safely(env: Path, d: Path) -> None:
    (d / "e.md").write_text(f"# {HOSTILE_TITLE}\n\ntext")
    (d / "odd\x1b[31m.md").write_text("# Odd\n\nname with an escape\n")
    code, out, _ = run("add", "d")
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out
    assert "added  d/odd.md" in out  # the escape sequence is dropped, the name stays
    code, out, _ = run("list")
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out
    assert "HIJACK" not in out  # the whole title-setting sequence is dropped
    assert "T [/] [red]x[/red]" in out  # the rest shown as written, not taken as markup
    code, out, _ = run("list", "--json")
    titles = {f["display_path"]: f["title"] for f in json.loads(out)}
    assert titles["d/e.md"] == HOSTILE_TITLE  # JSON is exact (and escapes controls itself)
    assert "\x1b" not in out
    code, out, _ = run("remove", str(d / "odd\x1b[31m.md"))
    assert code == 0 and "removed  d/odd.md" in out and "\x1b" not in out
    code, _out, err = run("remove", "gone\x1b[2J.md")
    assert code == 2 and "\x1b" not in err and "gone.md" in err
