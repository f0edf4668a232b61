"""`eval code`: the data set's format, the summary's arithmetic, and the removed-API set's
standard-library and NumPy items flagged in CodeWeaver's own environment."""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

import pytest

from codeweaver.codecheck import ApiIndex, NpmApi
from codeweaver_eval.code_eval import CodeItem, evaluate_code, load_items
from codeweaver_eval.datasets import DatasetError

REMOVED = Path(__file__).resolve().parents[2] / "fixtures" / "code_check" / "removed.jsonl"


@pytest.fixture(scope="module")
def own_api() -> ApiIndex:
    paths = sysconfig.get_paths()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    site = dict.fromkeys([Path(paths["purelib"]), Path(paths["platlib"])])
    return ApiIndex([*site, Path(paths["stdlib"])], python_version=version)


def test_bad_lines_are_refused_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"id": "a", "code": "x = 1"}\n{"id": "b", "code": 3}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"set\.jsonl:2: needs `code` text"):
        load_items(path)
    path.write_text('{"id": "a", "code": "x", "missing": "time.clock"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="list of names"):
        load_items(path)


def test_summary_counts_right_and_false_flags(own_api: ApiIndex) -> None:
    items = [
        CodeItem("right", "python", "import time\ntime.clock()\n", ("time.clock",)),
        CodeItem("false", "python", "import time\ntime.clock()\n"),  # flagged, not expected
        CodeItem("missed", "python", "x = 1\n", ("json.nothing",)),
        CodeItem("js", "javascript", "console.log(1)", ("console.nothing",)),  # not Python
    ]
    summary = evaluate_code(items, own_api).to_dict()
    assert summary["items"] == 3
    assert summary["expected"] == 2 and summary["recall"] == 0.5
    assert summary["flags"] == 2 and summary["precision"] == 0.5
    assert summary["false_flags"] == 1 and summary["items_with_false_flag"] == 1


def test_removed_standard_library_and_numpy_apis_are_all_flagged(own_api: ApiIndex) -> None:
    rows = [json.loads(line) for line in REMOVED.read_text(encoding="utf-8").splitlines()]
    # pandas is not installed here; the stdlib, builtins and NumPy (2.x) are.
    wanted = [r for r in rows if not r["id"].startswith("pd-")]
    assert len(wanted) >= 40
    items = [CodeItem(r["id"], "python", r["code"], tuple(r["missing"])) for r in wanted]
    report = evaluate_code(items, own_api)
    summary = report.to_dict()
    missed = [r.item.id for r in report.items if set(r.item.missing) - r.flagged]
    assert missed == []
    assert summary["false_flags"] == 0


def test_javascript_items_are_judged_when_the_project_has_node_modules(
    own_api: ApiIndex, tmp_path: Path
) -> None:
    package = tmp_path / "node_modules" / "lib"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "lib", "version": "1.0.0"}')
    (package / "index.d.ts").write_text("export declare function ok(): void;\n")
    items = [
        CodeItem("js", "javascript", "import { ok, gone } from 'lib';", ("lib.gone",)),
        CodeItem("ts", "typescript", "import { ok } from 'lib';"),
        CodeItem("go", "go", "fmt.Println(1)"),  # no check for it: skipped
    ]
    summary = evaluate_code(items, own_api, npm=NpmApi(tmp_path / "node_modules")).to_dict()
    assert summary["items"] == 2 and summary["recall"] == 1.0 and summary["false_flags"] == 0
    assert evaluate_code(items, own_api).to_dict()["items"] == 0  # no node_modules
