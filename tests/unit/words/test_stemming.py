"""The three stemmers, pinned on real words: each is tuned for its own purpose, so a change
to any stem (quirks included) is a behaviour change that needs its own measurement."""

from __future__ import annotations

import pytest

from codeweaver.words import stem_for_cache_check, stem_for_doc_search, stem_for_subjects


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("tuples", "tuple"),
        ("lists", "list"),
        ("Errors", "Error"),  # case is kept: callers pass lowercased tokens
        ("status", "statu"),  # a plain "s" strip, no exceptions beyond "ss"
        ("class", "class"),
        ("has", "has"),  # three letters or fewer stay
        ("튜플의", "튜플"),
        ("튜플을", "튜플"),
        ("리스트를", "리스트"),
        ("파이썬에서는", "파이썬"),  # the longest particle first
        ("의", "의"),  # a particle alone is not stripped to nothing
    ],
)
def test_stem_for_subjects(word: str, stem: str) -> None:
    assert stem_for_subjects(word) == stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("entries", "entry"),
        ("queries", "query"),
        ("series", "sery"),
        ("lines", "line"),
        ("loads", "load"),
        ("keys", "key"),
        ("bytes", "byte"),
        ("uses", "use"),
        ("classes", "class"),
        ("matches", "match"),
        ("boxes", "box"),
        ("sizes", "siz"),
        ("aliases", "aliase"),
        ("goes", "goe"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("bus", "bus"),
        ("os.path", "os.path"),
    ],
)
def test_stem_for_doc_search(word: str, stem: str) -> None:
    assert stem_for_doc_search(word) == stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("dictionaries", "dict"),  # synonyms first
        ("strings", "str"),
        ("integers", "int"),
        ("folders", "dir"),
        ("iterating", "loop"),
        ("values", "valu"),  # synonym, then Snowball
        ("running", "run"),
        ("sorting", "sort"),
        ("deleted", "delet"),
        ("generators", "generat"),
        ("easily", "easili"),
        ("pythonic", "python"),
        ("python", "python"),  # technologies stay
        ("without", "without"),  # negations stay
        ("datetime.date", "datetime.date"),  # dotted names stay
        ("c++", "c++"),
        ("3.12", "3.12"),
    ],
)
def test_stem_for_cache_check(word: str, stem: str) -> None:
    assert stem_for_cache_check(word) == stem


def test_the_stemmers_differ_where_their_purposes_do() -> None:
    assert {stem_for_subjects("entries"), stem_for_doc_search("entries")} == {"entrie", "entry"}
    assert stem_for_doc_search("values") == "value" != stem_for_cache_check("values")
