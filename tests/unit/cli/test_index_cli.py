"""`codeweaver index add|list|remove` through Typer's CliRunner, data in a tmp folder."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.cli.index_cmds import index_app
from codeweaver.memory.store_clients import close_shared_clients


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    data = tmp_path / "data"
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(data))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    yield data
    close_shared_clients()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "team-docs"
    folder.mkdir()
    (folder / "runbook.md").write_text(
        "# Runbook\n\nRestart the queue worker with `qctl bounce`.\n"
    )
    (folder / "notes.txt").write_text("The staging database is called lyra.\n")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(index_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_add_list_remove_json(env: Path, docs: Path) -> None:
    code, out, _ = run("add", str(docs), "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["counts"] == {
        "added": 2, "updated": 0, "unchanged": 0, "removed": 0, "skipped": 0, "failed": 1,
    }  # fmt: skip
    failed = [f for f in report["files"] if f["outcome"] == "failed"]
    assert (
        failed[0]["display_path"] == "team-docs/blob.txt" and failed[0]["reason"] == "binary file"
    )

    code, out, _ = run("list", "--json")
    listed = json.loads(out)
    assert code == 0 and [f["display_path"] for f in listed] == [
        "team-docs/notes.txt",
        "team-docs/runbook.md",
    ]
    assert all(f["chunks"] == 1 and f["indexed_at"] > 0 for f in listed)

    code, out, _ = run("add", str(docs), "--json")
    assert json.loads(out)["counts"]["unchanged"] == 2

    code, out, _ = run("remove", str(docs / "notes.txt"), "--json")
    assert code == 0 and json.loads(out)["counts"]["removed"] == 1
    code, out, _ = run("list", "--json")
    assert [f["display_path"] for f in json.loads(out)] == ["team-docs/runbook.md"]


def test_human_output(env: Path, docs: Path) -> None:
    code, out, _ = run("list")
    assert code == 0 and "knowledge base is empty (codeweaver index add PATH)" in out
    code, out, _ = run("add", str(docs))
    assert code == 0
    assert "added  team-docs/runbook.md (1 chunk)" in out
    assert "failed  team-docs/blob.txt — binary file" in out
    assert "added 2 · updated 0 · unchanged 0 · removed 0 · skipped 0 · failed 1" in out
    code, out, _ = run("list")
    assert code == 0 and "team-docs/runbook.md" in out and "2 files, 2 chunks" in out
    (docs / "runbook.md").write_text("# Runbook\n\nRestart with `qctl bounce --hard`.\n")
    code, out, _ = run("add", str(docs))
    assert "updated  team-docs/runbook.md" in out and "unchanged 1" in out


def test_missing_path_is_an_error(env: Path, docs: Path) -> None:
    code, _out, err = run("add", str(docs), "nowhere/at-all.md")
    assert code == 2
    assert "error:" in err and "no such file or folder: nowhere/at-all.md" in err
    assert not env.exists()  # nothing was indexed


def test_nothing_indexable_exits_1(env: Path, docs: Path) -> None:
    code, out, _ = run("add", str(docs / "blob.txt"))
    assert code == 1 and "binary file" in out


def test_remove_not_indexed_is_an_error(env: Path, docs: Path) -> None:
    run("add", str(docs))
    code, _out, err = run("remove", str(docs / "nope.md"))
    assert code == 2 and "not in the knowledge base" in err


def test_locked_store_is_a_clear_error(
    env: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEWEAVER_STORE_WAIT", "0.3")
    holder = textwrap.dedent(
        f"""
        import sys
        from qdrant_client import QdrantClient
        client = QdrantClient(path={str(env / "qdrant")!r})
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        code, _out, err = run("add", str(docs))
        assert code == 2
        message = " ".join(err.split())  # the console wraps long lines
        assert "does not share it" in message and "QDRANT_URL" in message
    finally:
        child.communicate("", timeout=30)


def test_help_is_light() -> None:
    code = textwrap.dedent(
        """
        import sys
        from codeweaver.cli.index_cmds import index_app
        try:
            index_app(["--help"])
        except SystemExit:
            pass
        heavy = ("numpy", "qdrant_client", "tokenizers", "pypdf", "langchain_text_splitters")
        print([m for m in heavy if m in sys.modules])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "add" in out.stdout and "remove" in out.stdout
