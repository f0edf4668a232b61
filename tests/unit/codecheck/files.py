"""Writes the small fake packages the code check's tests read."""

from __future__ import annotations

import json
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from codeweaver.codecheck import ApiIndex, check_python


def write_tree(root: Path, files: Mapping[str, str | dict[str, object]]) -> Path:
    """Each `files` entry under `root` (a dict is written as JSON); returns `root`."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(content) if isinstance(content, dict) else content
        path.write_text(text, encoding="utf-8")
    return root


def package_api(root: Path, files: Mapping[str, str | dict[str, object]]) -> ApiIndex:
    """An index over `files` written under `root`, and this interpreter's stdlib."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return ApiIndex([write_tree(root, files), stdlib], python_version="3.11")


def flags(code: str, api: ApiIndex) -> set[str]:
    """The names the check flags in `code`."""
    return {finding.name for finding in check_python(code, api).findings}
