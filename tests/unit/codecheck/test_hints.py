"""What the installed library says about a missing name: its module `__getattr__`'s
message from a literal table of removed names, or a top-level docstring line that names
both a class and the method it lacks; nothing when it says nothing."""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import pytest

from codeweaver.codecheck import ApiIndex
from codeweaver.codecheck.answers import check_answer_code
from codeweaver.codecheck.hints import class_mentions, removal_message
from tests.unit.codecheck.files import write_tree

PACKAGE = {
    "tables/__init__.py": (
        "from tables._gone import _REMOVED\n"
        "from tables.core import Table, merge\n"
        "_FORMER = {n: f'use {n}64' for n in ('float', 'int')}\n\n\n"
        "def __getattr__(name):\n"
        "    if name in _FORMER:\n        raise AttributeError(_FORMER[name])\n"
        "    if name in _REMOVED:\n        raise AttributeError(_REMOVED[name])\n"
        "    raise AttributeError(name)\n"
    ),
    "tables/__init__.pyi": "from tables.core import Table, merge\n",
    "tables/_gone.py": "_REMOVED = {'cast': 'Use `tables.convert(t, kind)` instead.'}\n",
    "tables/core.py": (
        "class Table:\n    def rows(self):\n        return []\n\n\n"
        "def merge(tables, prefix=''):\n"
        '    """Join tables.\n\n    Append the rows of a ``Table`` to another one.\n\n'
        "    prefix : str\n        String to prefix the rows of each Table with.\n"
        '    """\n'
    ),
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> ApiIndex:
    site = write_tree(tmp_path_factory.mktemp("site"), PACKAGE)
    return ApiIndex([site], python_version="3.11")


def test_a_removed_name_gets_the_module_s_own_message(api: ApiIndex) -> None:
    assert removal_message(api, "tables", "cast") == "Use `tables.convert(t, kind)` instead."
    # A table built by a comprehension is not read; an unlisted name has no message.
    assert removal_message(api, "tables", "float") == ""
    assert removal_message(api, "tables", "other") == ""


def test_a_missing_method_gets_the_docstring_lines_naming_it(api: ApiIndex) -> None:
    assert class_mentions(api, "tables.Table", "append") == [
        "`tables.merge`: Append the rows of a Table to another one."
    ]
    assert class_mentions(api, "tables.Table", "pop") == []


def test_the_rewrite_facts_carry_what_the_library_says(api: ApiIndex) -> None:
    answer = "```python\nimport tables\nt = tables.Table()\nt.append(1)\n```\n"
    check = check_answer_code(answer, api)
    assert [item.finding.name for item in check.findings] == ["tables.Table.append"]
    assert (
        check.findings[0]
        .fact()
        .endswith(
            "the installed library says: `tables.merge`: Append the rows of a Table to another one."
        )
    )


def test_numpy_s_expired_attributes() -> None:
    paths = sysconfig.get_paths()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    own = ApiIndex([Path(paths["purelib"]), Path(paths["stdlib"])], python_version=version)
    assert removal_message(own, "numpy", "float_") == "Use `np.float64` instead."
    check = check_answer_code("```python\nimport numpy as np\nx = np.NaN\n```", own)
    assert [(i.finding.name, i.says) for i in check.findings] == [
        ("numpy.NaN", ("Use `np.nan` instead.",))
    ]


def test_a_parameter_that_merely_mentions_the_name_is_no_hint(api: ApiIndex) -> None:
    # `pandas.get_dummies`: "prefix : str … String to append DataFrame column names."
    assert class_mentions(api, "tables.Table", "rows") == []
