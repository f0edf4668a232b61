"""Each purpose reads words its own way."""

from __future__ import annotations

from codeweaver.words import WORD
from codeweaver.words.patterns import (
    CODE_SEARCH_CAMEL_SPLIT,
    CODE_SEARCH_IDENTIFIER,
    CODE_SEARCH_WORD,
    COMPARE_WORD,
    DOC_SEARCH_PIECE,
    DOC_SEARCH_WORD,
    OVERLAP_CAMEL_SPLIT,
    PLACEHOLDER,
    TRANSLATION_LATIN,
    TRANSLATION_NUMBER,
)


def test_overlap_words_keep_hangul_and_split_on_case() -> None:
    assert WORD.findall("파이썬 list3 of_x") == ["파이썬", "list3", "of", "x"]
    assert OVERLAP_CAMEL_SPLIT.sub(" ", "HTTPServer parseHeader") == "HTTPServer parse Header"


def test_doc_search_words_keep_dotted_names_and_long_numbers() -> None:
    assert DOC_SEARCH_WORD.findall("os.path.join 7 42 x_y") == ["os.path.join", "42", "x_y"]
    assert DOC_SEARCH_PIECE.findall("TextIOBase") == ["Text", "IO", "Base"]


def test_compare_words_keep_symbols_dotted_names_and_versions() -> None:
    found = COMPARE_WORD.findall("use c++ and datetime.date in 3.12")
    assert found == ["use", "c++", "and", "datetime.date", "in", "3.12"]
    assert PLACEHOLDER.sub("_", "split `s` by ',' or \"x\"") == "split _ by _ or _"


def test_translation_terms() -> None:
    assert TRANSLATION_LATIN.findall("파이썬 3.12 node.js c++ x") == ["node.js", "c++", "x"]
    assert TRANSLATION_NUMBER.findall("v3.12 and 7") == ["3.12", "7"]


def test_code_search_words() -> None:
    assert CODE_SEARCH_CAMEL_SPLIT.sub(" ", "HTTPServer parseHeader") == "HTTP Server parse Header"
    assert CODE_SEARCH_IDENTIFIER.findall("x.y_z(1)") == ["x", "y_z"]
    assert CODE_SEARCH_WORD.findall("a-b c_d 파이썬") == ["a", "b", "c_d", "파이썬"]
