"""A project folder holding a copy of the fixture's node_modules (eventemitter3 5.0.1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[3] / "fixtures" / "npm_project"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A git project with eventemitter3 installed (the real package, see the fixture)."""
    root = tmp_path / "web-app"
    (root / ".git").mkdir(parents=True)
    shutil.copytree(FIXTURE / "node_modules", root / "node_modules")
    return root


def add_package(
    node_modules: Path,
    name: str,
    version: str = "1.0.0",
    files: dict[str, str] | None = None,
    *,
    at: str = "",
    **manifest: object,
) -> Path:
    """Install a made-up package `name` (scoped or not) with `files` beside its manifest,
    in `node_modules/<name>` or `node_modules/<at>`."""
    folder = node_modules.joinpath(*(at or name).split("/"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(
        json.dumps({"name": name, "version": version, **manifest}), encoding="utf-8"
    )
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
