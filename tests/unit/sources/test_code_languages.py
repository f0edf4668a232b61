"""Local code answers a question in the language it names, never from another language's files."""

from __future__ import annotations

from pathlib import Path

from codeweaver.sources.languages import foreign_code, is_foreign
from codeweaver.sources.local_code import search_code

# tests/fixtures/korean/stackeval_ko20.jsonl, line 6 (StackEval line 155, tag rust): in the
# CodeWeaver checkout it matched five Python files on "value", "type" and "trait".
RUST_QUESTION = (
    'Rust에서 "value has type Vec, which does not implement the `Copy` trait" 때문에 '
    "move가 일어난다는 에러가 나요. 어떻게 해결하나요?"
)
PYTHON_FILE = (
    "def value_type(trait):\n"
    "    return value.type  # value has type Vec, does not implement Copy trait\n"
)
RUST_FILE = "fn take(v: Vec<i32>) {}\n// value has type Vec, does not implement Copy trait\n"


def test_a_rust_question_reads_rust_files_and_notes_but_no_python() -> None:
    foreign = foreign_code(RUST_QUESTION)
    assert is_foreign(Path("app/ranking.py"), foreign)
    assert is_foreign(Path("web/app.ts"), foreign)
    assert not is_foreign(Path("src/main.rs"), foreign)
    assert not is_foreign(Path("README.md"), foreign)  # no language: kept


def test_a_python_or_unnamed_language_question_excludes_nothing() -> None:
    # StackEval-style Python question, and one naming no language at all.
    assert foreign_code("How do I sort a Python dictionary by value?") == frozenset()
    assert foreign_code("Why does my value have the wrong type?") == frozenset()
    # Python named beside another language: both kinds of files may hold the answer.
    assert foreign_code("Call a Rust library from Python") == frozenset()


def test_the_search_skips_files_of_another_language(tmp_path: Path) -> None:
    (tmp_path / "vec.py").write_text(PYTHON_FILE, encoding="utf-8")
    (tmp_path / "vec.rs").write_text(RUST_FILE, encoding="utf-8")
    rust = search_code([tmp_path], RUST_QUESTION, 5)
    assert [r["title"].partition(":")[0] for r in rust.results] == ["vec.rs"]
    english = search_code([tmp_path], '"value has type Vec, does not implement Copy trait"', 5)
    assert {r["title"].partition(":")[0] for r in english.results} == {"vec.py", "vec.rs"}
