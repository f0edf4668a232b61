"""Finding the user's project and its Python environment; bad interpreters fall back."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.sources.base import create_source
from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    collector_options,
    find_project,
    indexer,
)
from codeweaver.sources.installed_docs import project as project_module
from codeweaver.sources.installed_docs.project import (
    BY_ACTIVATION,
    BY_SETTING,
    choose_python,
    describe,
    env_index_dir,
    find_root,
    inspect_python,
    own_environment,
    venv_python,
)

OWN_PREFIX = Path(sys.prefix).resolve()
posix_only = pytest.mark.skipif(os.name != "posix", reason="fake interpreters are sh scripts")


def _script(path: Path, body: str, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(mode)
    return path


def _fake_venv(folder: Path) -> Path:
    """A venv-shaped folder whose `python` is a script (never run by these tests)."""
    return _script(venv_python(folder), "exit 3")


@pytest.fixture()
def no_activation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


# --------------------------------------------------------------------------- the root


@pytest.mark.parametrize("git_is_a_file", [False, True])
def test_the_root_is_the_nearest_folder_holding_git(tmp_path: Path, git_is_a_file: bool) -> None:
    repo = tmp_path / "repo"
    inner = repo / "src" / "pkg"
    inner.mkdir(parents=True)
    if git_is_a_file:  # a worktree or submodule: `.git` is a file naming the real one
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    else:
        (repo / ".git").mkdir()
    assert find_root(inner) == repo
    assert find_root(repo) == repo
    assert find_project(inner).root == repo


def test_without_git_the_folder_itself_is_the_root(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    assert find_root(folder) == folder
    project = find_project(folder)
    assert project.root == folder.resolve()
    assert project.env is None and "no .venv or venv" in project.reason


def test_a_missing_project_folder_is_a_reason(tmp_path: Path) -> None:
    project = find_project(tmp_path / "gone")
    assert project.env is None and "does not exist" in project.reason


# --------------------------------------------------------------------------- interpreter order


def test_interpreter_order(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    dot_venv, venv = _fake_venv(root / ".venv"), _fake_venv(root / "venv")
    activated = _fake_venv(tmp_path / "activated")
    chosen = tmp_path / "bin" / "python3.12"

    assert choose_python(root, chosen, str(tmp_path / "activated")) == (chosen, BY_SETTING)
    assert choose_python(root, None, str(tmp_path / "activated")) == (activated, BY_ACTIVATION)
    assert choose_python(root) == (dot_venv, ".venv in the project")
    dot_venv.unlink()
    assert choose_python(root) == (venv, "venv in the project")
    venv.unlink()
    assert choose_python(root) is None


def test_a_bare_command_name_is_looked_up_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _script(tmp_path / "bin" / "mypython", "exit 0")
    monkeypatch.setenv("PATH", str(found.parent))
    monkeypatch.chdir(tmp_path)
    assert choose_python(tmp_path, Path("mypython")) == (found, BY_SETTING)


# --------------------------------------------------------------------------- own environment


def test_codeweavers_own_interpreter_is_recognised_without_asking_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*args: object) -> object:
        raise AssertionError("our own interpreter needs no subprocess")

    monkeypatch.setattr(project_module, "_ask", never)
    env = inspect_python(Path(sys.executable), ".venv in the project")
    assert not isinstance(env, str)
    assert env.own and env.prefix == OWN_PREFIX and env.sys_version == sys.version


@posix_only
def test_codeweavers_own_environment_is_recognised_by_its_prefix(tmp_path: Path) -> None:
    # A launcher script: only the subprocess's answer says whose interpreter it is.
    launcher = _script(tmp_path / "python", f'exec "{sys.executable}" "$@"')
    env = inspect_python(launcher, BY_SETTING)
    assert not isinstance(env, str), env
    assert env.own and env.prefix == OWN_PREFIX


def test_our_own_venv_as_the_project_venv_keeps_todays_index(
    tmp_path: Path, no_activation: None
) -> None:
    # CI: run from the repository checkout, whose `.venv` is CodeWeaver's environment.
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / ".venv").symlink_to(OWN_PREFIX, target_is_directory=True)
    settings = Settings(project=root, cache_dir=tmp_path / "cache")
    source = create_source("installed_docs", settings)
    assert isinstance(source, InstalledDocsSource)
    assert source.environment is not None and source.environment.own
    assert source.options == CollectorOptions()
    assert source.env_dir == settings.docs_index_dir
    assert indexer.compute_fingerprint(source.options) == indexer.compute_fingerprint(
        CollectorOptions()
    )
    report = describe(find_project(root / "src"), settings.docs_index_dir)
    assert report["environment"] == "codeweaver" and report["found_by"] == ".venv in the project"
    assert report["index"] == str(settings.docs_index_dir) and "reason" not in report


def test_an_activated_codeweaver_venv_does_not_hide_the_projects(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    project_python = _fake_venv(root / ".venv")
    assert choose_python(root, None, str(OWN_PREFIX)) == (project_python, ".venv in the project")
    project_python.unlink()
    own = choose_python(root, None, str(OWN_PREFIX))
    assert own is not None and own[1] == BY_ACTIVATION
    env = inspect_python(*own)
    assert not isinstance(env, str) and env.own


def test_no_environment_means_todays_options_and_folder(tmp_path: Path) -> None:
    assert collector_options(None) == CollectorOptions()
    assert collector_options(own_environment()) == CollectorOptions()
    assert env_index_dir(tmp_path, None) == tmp_path
    assert env_index_dir(tmp_path, own_environment()) == tmp_path


# --------------------------------------------------------------------------- bad interpreters


def _falls_back(tmp_path: Path, python: Path, timeout: float = 10.0) -> str:
    """Find the project with `python` configured; assert the fallback, return the reason."""
    project = find_project(tmp_path, python=python, timeout=timeout)
    assert project.env is None and project.reason
    assert collector_options(project.env) == CollectorOptions()
    return project.reason


def test_a_missing_interpreter_gives_a_reason(tmp_path: Path) -> None:
    reason = _falls_back(tmp_path, tmp_path / "nope" / "python")
    assert reason == f"{BY_SETTING}: {tmp_path / 'nope' / 'python'} does not exist"


@posix_only
def test_a_non_executable_interpreter_gives_a_reason(tmp_path: Path) -> None:
    python = _script(tmp_path / "python", "exit 0", mode=0o644)
    assert _falls_back(tmp_path, python).endswith("is not executable")


def test_a_folder_is_not_an_interpreter(tmp_path: Path) -> None:
    assert "is a folder" in _falls_back(tmp_path, tmp_path)


@posix_only
def test_a_failing_interpreter_gives_its_last_error_line(tmp_path: Path) -> None:
    python = _script(tmp_path / "python", 'echo "Fatal Python error: no encodings" >&2\nexit 1')
    reason = _falls_back(tmp_path, python)
    assert reason.endswith("exited with status 1: Fatal Python error: no encodings")


@posix_only
def test_an_executable_that_cannot_be_run_gives_a_reason(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_bytes(b"\x7fELF not really")
    python.chmod(0o755)
    assert "cannot be run (" in _falls_back(tmp_path, python)


@posix_only
def test_an_interpreter_printing_nonsense_gives_a_reason(tmp_path: Path) -> None:
    python = _script(tmp_path / "python", "echo hello")
    assert "did not report its paths" in _falls_back(tmp_path, python)


@posix_only
def test_a_hanging_interpreter_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    # The script starts a child that would keep the pipes open: the whole group is stopped.
    python = _script(tmp_path / "python", "sleep 30 &\nexec sleep 30")
    started = time.monotonic()
    reason = _falls_back(tmp_path, python, timeout=0.5)
    assert time.monotonic() - started < 5
    assert reason.endswith("did not answer within 0.5 s")


def test_a_bad_configured_interpreter_leaves_the_source_on_codeweavers_environment(
    tmp_path: Path,
) -> None:
    settings = Settings(
        project=tmp_path, project_python=tmp_path / "missing", cache_dir=tmp_path / "cache"
    )
    source = create_source("installed_docs", settings)
    assert isinstance(source, InstalledDocsSource)
    assert source.environment is None and source.options == CollectorOptions()
    assert source.env_dir == settings.docs_index_dir


def test_settings_read_the_documented_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_PROJECT", "/srv/app")
    monkeypatch.setenv("CODEWEAVER_PROJECT_PYTHON", "/srv/app/.venv/bin/python")
    monkeypatch.setenv("PROJECT", "/somebody/else")
    settings = Settings()
    assert settings.project == Path("/srv/app")
    assert settings.project_python == Path("/srv/app/.venv/bin/python")
    monkeypatch.setenv("CODEWEAVER_PROJECT", "")
    assert Settings().project is None  # empty means unset, not the working directory
    assert Settings(project=Path("/x")).project == Path("/x")
