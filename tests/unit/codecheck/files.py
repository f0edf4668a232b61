"""Writes the small fake packages the code check's tests read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


def write_tree(root: Path, files: Mapping[str, str | dict[str, object]]) -> Path:
    """Each `files` entry under `root` (a dict is written as JSON); returns `root`."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(content) if isinstance(content, dict) else content
        path.write_text(text, encoding="utf-8")
    return root
