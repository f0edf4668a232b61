"""Questions about another language get no installed Python docs.

Titles from StackEval (Stack Overflow, CC BY-SA 4.0, via ProsusAI/stack-eval; the sample of
`codeweaver eval answers --sample 30 --seed 1`) and CoNaLa intents (MIT / CC BY-SA)."""

from __future__ import annotations

import pytest

from codeweaver.sources.installed_docs.exact import other_language

TOPS = frozenset({"os", "json", "re", "sqlite3", "datetime", "requests"})


@pytest.mark.parametrize(
    "title",
    [
        "In Java, when should we use private instance methods in interfaces?",
        "How to initialize Kotlin IntArray from IntRange?",
        "Add generated column to an existing table Postgres",
        "Bash associative array with list as value",
        "Logging in .NET Core without DI?",
        "Cannot find name 'it' in Jest TypeScript",
        "Check that a List parameter is null in a Spring data JPA query",
    ],
)
def test_a_question_about_another_language_is_left_to_other_sources(title: str) -> None:
    assert other_language(title, TOPS) is not None


@pytest.mark.parametrize(
    "title",
    [
        # StackEval, python-tagged titles of the same sample.
        "Convert datetime.min into offset aware datetime",
        "No handles with labels found to put in legend",
        "Repeat items in list to required length",
        # CoNaLa intents that name a database, but from Python.
        "How to check if something exists in a postgresql database using django?",
        "How to grab one random item from a database in Django/postgreSQL?",
        # Plain words that are also names of other platforms' tools stay Python's.
        "How to run a shell command and react to its output?",
    ],
)
def test_python_questions_and_python_names_keep_the_docs(title: str) -> None:
    assert other_language(title, TOPS) is None


def test_an_installed_package_the_question_names_keeps_the_docs() -> None:
    assert other_language("Read a MySQL table with requests data", TOPS) is None
    assert other_language("Read a MySQL table", TOPS) == "MySQL"


def test_korean_particles_do_not_hide_the_language() -> None:
    # tests/fixtures/korean/stackeval_ko20.jsonl, StackEval lines 155 and 417.
    rust = "Rust에서 move가 일어난다는 에러가 나요. 어떻게 해결하나요?"
    assert other_language(rust, TOPS) == "Rust"
    assert other_language("파이썬에서 MySQL 테이블을 읽는 방법", TOPS) is None
