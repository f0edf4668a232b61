"""Which files `index add` reads: symlinks, hidden files, FIFOs, unreadable folders, "" (D2,
D16, D17, D18). Real symlinks and FIFOs in a tmp folder; nothing is embedded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.kb.loaders import iter_files
from codeweaver.kb.report import FileResult
from codeweaver.kb.scan import NOT_REGULAR, OUT_OF_FOLDER, scan
from tests.unit.kb.helpers import deny_scandir


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """`d/` to index next to `outside/` holding what must never be read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd.md").write_text("# root:x:0:0\n")
    (outside / "secrets").mkdir()
    (outside / "secrets" / "key.md").write_text("# the key\n")
    (tmp_path / ".env").write_text("API_KEY=hunter2\n")
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "real.md").write_text("# Real\n")
    (d / "sub" / "deep.md").write_text("# Deep\n")
    return d


def names(found: dict[Path, str]) -> list[str]:
    return sorted(found.values())


def problems(found: list[FileResult]) -> list[tuple[str, str, str]]:
    return [(p.display_path, p.outcome, p.reason) for p in found]


# -- D2: symlinks ------------------------------------------------------------------------


def test_file_symlinks_out_of_the_folder_are_skipped_and_reported(tree: Path) -> None:
    (tree / "x.md").symlink_to(tree.parent / "outside" / "passwd.md")
    (tree / "settings.txt").symlink_to("../.env")  # relative, like `ln -s ../.env`
    (tree / "gone.md").symlink_to(tree.parent / "outside" / "nowhere.md")  # broken
    result = scan([tree])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert problems(result.problems) == [
        ("d/gone.md", "skipped", OUT_OF_FOLDER),
        ("d/settings.txt", "skipped", OUT_OF_FOLDER),
        ("d/x.md", "skipped", OUT_OF_FOLDER),
    ]
    assert result.problems[-1].path == str(tree.resolve() / "x.md")  # the link, not its target
    # The old walk listed the links themselves: the same check through the walk alone.
    assert [p.name for p in iter_files(tree)] == ["real.md", "deep.md"]


def test_folder_symlinks_are_never_followed(tree: Path) -> None:
    (tree / "keys").symlink_to(tree.parent / "outside" / "secrets")
    (tree / "again").symlink_to(tree / "sub")  # inside: its files are found as sub/…
    result = scan([tree])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert problems(result.problems) == [("d/keys", "skipped", OUT_OF_FOLDER)]


def test_symlink_inside_the_folder_is_indexed_once_under_its_target(tree: Path) -> None:
    (tree / "alias.md").symlink_to("real.md")
    (tree / "peek.md").symlink_to(".hidden.md")  # the target is hidden: read neither
    (tree / ".hidden.md").write_text("# Hidden\n")
    result = scan([tree])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert result.problems == []


def test_symlink_into_another_given_folder_is_not_reported(tree: Path) -> None:
    other = tree.parent / "outside"
    (tree / "x.md").symlink_to(other / "passwd.md")
    result = scan([tree, other])
    assert "outside/passwd.md" in names(result.files) and "d/x.md" not in names(result.files)
    assert result.problems == []


def test_symlink_given_explicitly_is_resolved(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "link-to-d").symlink_to(tree)
    (tmp_path / "note.md").symlink_to(tree / "real.md")
    result = scan([tmp_path / "link-to-d", tmp_path / "note.md"])
    assert result.folders == [tree.resolve()]
    # The folder walked is the target, the file is the target: paths name the real files.
    assert result.files == {
        tree.resolve() / "real.md": "d/real.md",
        tree.resolve() / "sub" / "deep.md": "d/sub/deep.md",
    }


def test_nested_folders_report_a_link_once(tree: Path) -> None:
    (tree / "sub" / "x.md").symlink_to(tree.parent / "outside" / "passwd.md")
    result = scan([tree, tree / "sub"])
    assert [p.reason for p in result.problems] == [OUT_OF_FOLDER]


# -- hidden files and folders ------------------------------------------------------------


@pytest.fixture
def hidden(tree: Path) -> Path:
    for name in (".env.md", ".notes/x.md", ".git/y.md", "node_modules/z.md", ".venv/w.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("# should not be indexed by default\n")
    return tree


def test_hidden_files_and_folders_are_skipped_by_default(hidden: Path) -> None:
    result = scan([hidden])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert result.problems == []  # skipped silently: the default, not a problem


def test_include_hidden_reads_them_but_never_vcs_or_dependency_folders(hidden: Path) -> None:
    result = scan([hidden], include_hidden=True)
    assert names(result.files) == ["d/.env.md", "d/.notes/x.md", "d/real.md", "d/sub/deep.md"]


def test_hidden_path_given_explicitly_is_indexed(hidden: Path) -> None:
    result = scan([hidden / ".env.md", hidden / ".notes"])
    assert names(result.files) == [".env.md", ".notes/x.md"]


# -- D17: FIFOs and other special files ----------------------------------------------------


def test_fifos_are_reported_and_never_opened(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tree / "p.md")
    os.mkfifo(tree / "pipe")  # not a supported name: never a candidate, nothing to say
    opened: list[str] = []
    real_open = os.open

    def spy(path: str | os.PathLike[str], *args: int) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", spy)
    result = scan([tree, tree / "p.md"])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    # Found in the folder and given by name: reported once, as given.
    assert problems(result.problems) == [(str(tree / "p.md"), "skipped", NOT_REGULAR)]
    assert problems(scan([tree]).problems) == [("d/p.md", "skipped", NOT_REGULAR)]
    assert not any(path.endswith("p.md") for path in opened)


def test_socket_in_a_folder_is_reported(tree: Path) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tree / "s.md"))
    except OSError as exc:  # e.g. a path too long for AF_UNIX
        pytest.skip(f"cannot create a socket file here: {exc}")
    try:
        assert problems(scan([tree]).problems) == [("d/s.md", "skipped", NOT_REGULAR)]
    finally:
        sock.close()


# -- D18: unreadable folders ---------------------------------------------------------------


@pytest.fixture
def locked(tree: Path) -> Iterator[Path]:
    folder = tree / "locked"
    folder.mkdir()
    (folder / "inside.md").write_text("# Inside\n")
    folder.chmod(0)
    yield folder
    folder.chmod(0o755)  # let pytest clean up


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads a chmod 000 folder anyway; "
    "test_unreadable_folder_simulated covers the reporting as root",
)
def test_unreadable_folder_is_reported(tree: Path, locked: Path) -> None:
    result = scan([tree])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert problems(result.problems) == [("d/locked", "failed", "permission denied")]


def test_unreadable_folder_simulated(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "locked").mkdir()
    (tree / "locked" / "inside.md").write_text("# Inside\n")
    deny_scandir(monkeypatch, tree / "locked")
    result = scan([tree])
    assert names(result.files) == ["d/real.md", "d/sub/deep.md"]
    assert problems(result.problems) == [("d/locked", "failed", "permission denied")]
    assert result.problems[0].path == str((tree / "locked").resolve())


# -- D16: an empty path --------------------------------------------------------------------


@pytest.mark.parametrize("given", ["", "   "])
def test_empty_path_is_refused_not_the_current_folder(
    given: str, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    result = scan([given])
    assert result.files == {} and result.folders == []
    assert problems(result.problems) == [(given, "failed", "empty path")]
