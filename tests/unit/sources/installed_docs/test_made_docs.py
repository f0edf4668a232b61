"""Docstrings a library writes at import time (pandas' decorators, NumPy's `add_newdoc`),
and members a public class inherits from a private or internal base: read from the source
with `ast`, never imported (each package raises on import)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codeweaver.sources.installed_docs import CollectorOptions, DocEntry, collect_entries
from codeweaver.sources.installed_docs.made_docs import MAX_CHARS, brace_format, percent

RAISE = 'raise SystemExit("parsed, never imported")\n'

# pandas 2.2's shape: `read_csv` has no docstring of its own; its text is a module string
# formatted with `.format`, with parts from a dict another module fills (in a class body).
SHARED = '''
_shared_docs: dict[str, str] = {}
_shared_docs["storage_options"] = """storage_options : dict, optional
    Extra options for a storage connection."""
'''
READERS = '''
from fakepd.shared import _shared_docs
from fakepd.util import Appender, Substitution, doc

_doc_read = (
    r"""
{summary}

Parameters
----------
skiprows : int, optional
    Line numbers to skip at the start of the file.
"""
    + _shared_docs["storage_options"]
)


@Appender(_doc_read.format(summary="Read a comma-separated values (csv) file into DataFrame."))
def read_csv(filepath, *, sep=",", skiprows=None):
    pass


def _template():
    """Fill NA/NaN values of the {klass} using the specified method."""


@doc(_template, klass="DataFrame")
def fillna(value=None):
    pass


@Substitution(what="rows")
@Appender("Drop the %(what)s that hold missing values.")
def dropna():
    pass


def plain():
    pass
'''
FRAME = '''
from fakepd.shared import _shared_docs
from fakepd.util import Appender


class DataFrame:
    """Two-dimensional tabular data."""

    _shared_docs["groupby"] = """Group DataFrame using a mapper or by a Series of columns."""

    @Appender(_shared_docs["groupby"])
    def groupby(self, by=None):
        pass
'''
UTIL = "def Appender(x): ...\ndef Substitution(**k): ...\ndef doc(*a, **k): ...\n"
INIT_PD = (
    "from fakepd.readers import read_csv, fillna, dropna, plain\n"
    "from fakepd.frame import DataFrame\n" + RAISE
)

# NumPy's shape: C functions and `ndarray` documented by `add_newdoc` calls.
NEWDOCS = '''
from fakenp.core.function_base import add_newdoc

add_newdoc('fakenp.core.multiarray', 'zeros',
    """
    zeros(shape, dtype=float, order='C')

    Return a new array of given shape and type, filled with zeros.
    """)

add_newdoc('fakenp.core.multiarray', 'ndarray',
    """
    ndarray(shape, dtype=float)

    An array object represents a multidimensional, homogeneous array.
    """)

add_newdoc('fakenp.core.multiarray', 'ndarray', ('reshape',
    """
    a.reshape(shape, /, *, order='C')

    Returns an array containing the same data with a new shape.
    """))

add_newdoc('fakenp.core.multiarray', 'ndarray', ('shape',
    """
    Tuple of array dimensions.
    """))
'''

# argparse's shape: `add_argument` lives on a private base; `ArgumentParser` inherits it.
CONTAINERS = '''
class _Container:
    def add_thing(self, name):
        """Define how a single command-line thing should be parsed."""

    def describe(self):
        """Describe the container (base)."""


class Parser(_Container):
    """Turn command-line strings into objects."""

    def describe(self):
        """Describe the parser itself."""
'''
GENERIC = '''
class Frame:
    """The base of tables and columns."""

    def to_csv(self, path=None):
        """Write object to a comma-separated values (csv) file."""
'''
TABLES = '''
from fakeinh import generic
from fakeinh.generic import Frame


class Table(Frame):
    """A table."""


class Column(generic.Frame):
    """A column."""
'''


def _write(site: Path, name: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = [f"{rel},," for rel in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, DocEntry]:
    site = tmp_path_factory.mktemp("site-packages")
    _write(
        site,
        "fakepd",
        {
            "fakepd/__init__.py": INIT_PD,
            "fakepd/shared.py": SHARED,
            "fakepd/util.py": UTIL,
            "fakepd/readers.py": READERS,
            "fakepd/frame.py": FRAME,
        },
    )
    _write(
        site,
        "fakenp",
        {
            "fakenp/__init__.py": "from fakenp.core import zeros, ndarray\n" + RAISE,
            "fakenp/core/__init__.py": "from fakenp.core.multiarray import zeros, ndarray\n",
            "fakenp/core/multiarray.py": "from fakenp.core._umath import *\n",
            "fakenp/core/function_base.py": "def add_newdoc(place, obj, doc): ...\n",
            "fakenp/core/_add_newdocs.py": NEWDOCS,
        },
    )
    _write(
        site,
        "fakeinh",
        {
            "fakeinh/__init__.py": "from fakeinh.containers import Parser\n"
            "from fakeinh.tables import Table, Column\n" + RAISE,
            "fakeinh/containers.py": CONTAINERS,
            "fakeinh/generic.py": GENERIC,
            "fakeinh/tables.py": TABLES,
        },
    )
    options = CollectorOptions(
        include_stdlib=False, include_builtin_modules=False, include_topics=False, paths=(site,)
    )
    return {e.name: e for e in collect_entries(options)}


def test_a_docstring_appended_by_a_decorator_is_read(entries: dict[str, DocEntry]) -> None:
    read_csv = entries["fakepd.read_csv"]
    assert read_csv.kind == "function"
    assert read_csv.doc.startswith("Read a comma-separated values (csv) file into DataFrame.")
    assert "skiprows : int, optional" in read_csv.doc
    assert "Extra options for a storage connection." in read_csv.doc  # from another module
    assert "fakepd.readers.read_csv" in read_csv.aliases
    assert "plain" not in {name.rpartition(".")[2] for name in entries}  # still no doc


def test_substitution_and_doc_templates_are_filled(entries: dict[str, DocEntry]) -> None:
    assert entries["fakepd.dropna"].doc == "Drop the rows that hold missing values."
    # `@doc(_template, klass=...)`: a private function's docstring, `{klass}` filled.
    assert entries["fakepd.fillna"].doc == (
        "Fill NA/NaN values of the DataFrame using the specified method."
    )


def test_a_dict_filled_in_a_class_body_documents_its_method(
    entries: dict[str, DocEntry],
) -> None:
    groupby = entries["fakepd.DataFrame.groupby"]
    assert groupby.kind == "method"
    assert groupby.doc == "Group DataFrame using a mapper or by a Series of columns."


def test_add_newdoc_documents_c_functions_classes_and_methods(
    entries: dict[str, DocEntry],
) -> None:
    zeros = entries["fakenp.zeros"]
    assert (zeros.kind, zeros.signature) == ("function", "zeros(shape, dtype=float, order='C')")
    assert zeros.doc == "Return a new array of given shape and type, filled with zeros."
    assert entries["fakenp.ndarray"].kind == "class"
    reshape = entries["fakenp.ndarray.reshape"]
    assert (reshape.kind, reshape.signature) == ("method", "a.reshape(shape, /, *, order='C')")
    assert entries["fakenp.ndarray.shape"].kind == "property"


def test_members_are_published_under_the_class_that_inherits_them(
    entries: dict[str, DocEntry],
) -> None:
    # A private base's member had no page at all; now it is the public subclass's.
    add = entries["fakeinh.Parser.add_thing"]
    assert add.doc == "Define how a single command-line thing should be parsed."
    # An override is its own page; the base's is not published under the subclass.
    assert entries["fakeinh.Parser.describe"].doc == "Describe the parser itself."
    assert not any("_Container" in n for e in entries.values() for n in (e.name, *e.aliases))
    # A base imported by name or through its module: both subclasses inherit `to_csv`.
    to_csv = entries["fakeinh.Table.to_csv"]
    names = {to_csv.name, *to_csv.aliases}
    assert {"fakeinh.Table.to_csv", "fakeinh.Column.to_csv", "fakeinh.generic.Frame.to_csv"} <= (
        names
    )


def test_substitution_honours_no_width_and_caps_the_text() -> None:
    # A format specification is never applied: no width can blow a text up.
    assert percent("%(x)999999999s|%d|%%", {"x": "a"}) == "a||%"
    assert percent("%s and %s", ("one",)) == "one and "
    assert brace_format("{a:>999999999}{{literal}}{0}{missing}", ("z",), {"a": "b"}) == (
        "b{literal}z"
    )
    assert len(percent("%s" * 10, ("x" * MAX_CHARS,) * 10)) == MAX_CHARS


def test_a_cycle_of_names_ends(tmp_path: Path) -> None:
    site = tmp_path / "site"
    cyclic = (
        "a = b + 'x'\nb = a + 'y'\n\n"
        "@Appender(a)\ndef looped():\n    pass\n\n"
        "@Appender('Kept.')\ndef kept():\n    pass\n"
    )
    _write(site, "cyclic", {"cyclic.py": cyclic})
    options = CollectorOptions(
        include_stdlib=False, include_builtin_modules=False, include_topics=False, paths=(site,)
    )
    found = {e.name: e for e in collect_entries(options)}
    assert found["cyclic.kept"].doc == "Kept."
