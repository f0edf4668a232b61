"""`codeweaver eval code`: the code check alone, on lines `{"id", "language", "code",
"missing": [names expected to be flagged]}`.

Per item: the findings; in all: recall (expected names flagged), precision (flags that
were expected), and the false flags (flags no line expected), counted per item and per
use judged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeweaver.codecheck import ApiIndex, CodeReport, NpmApi, check_js, check_python
from codeweaver.codecheck.answers import JS_INFO
from codeweaver_eval.datasets import DatasetError, read_jsonl

PYTHON = ("python", "py", "python3", "")


@dataclass(frozen=True)
class CodeItem:
    id: str
    language: str
    code: str
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class ItemResult:
    item: CodeItem
    report: CodeReport
    seconds: float

    @property
    def flagged(self) -> set[str]:
        return {finding.name for finding in self.report.findings}

    @property
    def false_flags(self) -> set[str]:
        return self.flagged - set(self.item.missing)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.item.id,
            "missing": list(self.item.missing),
            "findings": [finding.to_dict() for finding in self.report.findings],
            "false_flags": sorted(self.false_flags),
            "parsed": self.report.parsed,
            "checked": self.report.checked,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class CodeEvalReport:
    items: tuple[ItemResult, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        expected = sum(len(r.item.missing) for r in self.items)
        found = sum(len(set(r.item.missing) & r.flagged) for r in self.items)
        flags = sum(len(r.flagged) for r in self.items)
        false = sum(len(r.false_flags) for r in self.items)
        checked = sum(r.report.checked for r in self.items)
        with_false = sum(bool(r.false_flags) for r in self.items)
        return {
            "items": len(self.items),
            "parsed": sum(r.report.parsed for r in self.items),
            "expected": expected,
            "recall": found / expected if expected else None,
            "flags": flags,
            "precision": (flags - false) / flags if flags else None,
            "false_flags": false,
            "items_with_false_flag": with_false,
            "false_flag_rate": (
                sum(bool(r.false_flags) for r in self.items) / len(self.items)
                if self.items
                else 0.0
            ),
            "uses_checked": checked,
            "seconds": round(sum(r.seconds for r in self.items), 2),
        }


def load_items(path: Path, limit: int | None = None) -> list[CodeItem]:
    items: list[CodeItem] = []
    for line, row in read_jsonl(path):
        code, missing = row.get("code"), row.get("missing", [])
        if not isinstance(code, str):
            raise DatasetError(path, "needs `code` text", line)
        if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
            raise DatasetError(path, "`missing` must be a list of names", line)
        language = str(row.get("language") or "python").lower()
        items.append(CodeItem(str(row.get("id", line)), language, code, tuple(missing)))
        if limit is not None and len(items) >= limit:
            break
    return items


def evaluate_code(
    items: Sequence[CodeItem],
    api: ApiIndex,
    on_progress: Callable[[int, int], None] | None = None,
    npm: NpmApi | None = None,
) -> CodeEvalReport:
    """Check each Python item, and each JavaScript/TypeScript one when the project has
    `node_modules` (`npm`); items in other languages are skipped."""
    import time

    results: list[ItemResult] = []
    judged = [i for i in items if i.language in PYTHON or (npm and i.language in JS_INFO)]
    for done, item in enumerate(judged, 1):
        started = time.perf_counter()
        if item.language in PYTHON or npm is None:
            report = check_python(item.code, api)
        else:
            report = check_js(item.code, npm)
        results.append(ItemResult(item, report, time.perf_counter() - started))
        if on_progress is not None:
            on_progress(done, len(judged))
    return CodeEvalReport(tuple(results))
