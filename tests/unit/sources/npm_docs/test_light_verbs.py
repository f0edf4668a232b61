"""A light verb opening the question's task ("How do I *make* …") does not count against
the entries of a small npm index: in the project of a made-up `idgen` package shaped like
`nanoid` 3.3.7's `.d.ts`, "make" is a word no entry holds, and it sank `customAlphabet`
under the bar (0.4765 against 0.5 for nanoid's own question)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.sources.npm_docs import NpmDocsSource, project_folders
from codeweaver.sources.npm_docs.tokens import query_tokens
from tests.unit.sources.npm_docs.conftest import add_package

DTS = """\
/**
 * Generate secure URL-friendly unique ID.
 *
 * @param size Size of the ID. The default size is 21.
 * @returns A random string.
 */
export function idgen(size?: number): string

/**
 * Generate secure unique ID with custom alphabet.
 *
 * Alphabet must contain 256 symbols or less.
 *
 * @param alphabet Alphabet used to generate the ID.
 * @param defaultSize Size of the ID. The default size is 21.
 * @returns A random string generator.
 */
export function customAlphabet(alphabet: string, defaultSize?: number): () => string

/**
 * Generate unique ID with custom random generator and alphabet.
 *
 * @param alphabet Alphabet used to generate a random string.
 * @param size Size of the random string.
 * @param random A random bytes generator.
 */
export function customRandom(alphabet: string, size: number, random: unknown): () => string

/** URL safe symbols. */
export const urlAlphabet: string
"""


@pytest.fixture()
def source(tmp_path: Path) -> NpmDocsSource:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    add_package(root / "node_modules", "idgen", "3.3.7", {"index.d.ts": DTS}, types="index.d.ts")
    return NpmDocsSource(tmp_path / "cache", project_folders(root))


def _names(source: NpmDocsSource, question: str) -> list[str]:
    return [r["reference"].partition("#")[2] for r in source.search_sync(question, 5)]


def test_the_opening_light_verb_is_an_expansion_not_a_plain_word() -> None:
    plain, extra = query_tokens("How do I make an idgen with a custom alphabet?")
    assert plain == ["idgen", "custom", "alphabet"]
    assert "make" in extra  # still adds to an entry that holds it
    # Only the verb that opens the task: later, "make" is a word of the question.
    assert query_tokens("idgen: what does make do")[0] == ["idgen", "make"]
    assert query_tokens("make")[0] == ["make"]  # nothing else to search for


@pytest.mark.parametrize(
    "question",
    [
        "How do I make an idgen with a custom alphabet?",
        "How can I create an ID with a custom alphabet?",
        "How do I use a custom alphabet with idgen?",
    ],
)
def test_a_how_to_with_a_light_verb_finds_the_api(source: NpmDocsSource, question: str) -> None:
    assert _names(source, question)[0] == "customAlphabet"


@pytest.mark.parametrize(
    "question",
    [
        "How do I make an HTTP request?",  # no word of it is in the package
        "How do I create a React component?",
        "How do I sort a list of numbers?",
    ],
)
def test_questions_the_package_cannot_answer_still_get_nothing(
    source: NpmDocsSource, question: str
) -> None:
    assert source.search_sync(question, 5) == []
