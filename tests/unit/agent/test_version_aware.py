"""Version-aware answers: the answer prompt states the installed version of a library the
question names, and a Stack Overflow answer written for an older major version shows its
date. Every model is scripted."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from codeweaver.agent import prompts
from codeweaver.agent.answering.versions import dated_title, installed_versions, names_in
from codeweaver.agent.nodes.answer import generate_answer
from codeweaver.agent.state import SearchResult
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.llm.structured import message_text
from codeweaver.sources.base import KnowsInstalledVersions
from tests.fakes import FakeSource, doc, make_deps

VERSIONS = {"pandas": "2.1.4", "requests": "2.31.0", "scikit-learn": "1.3.2", "sklearn": "1.3.2"}
LINE_EN = prompts.INSTALLED["en"]


class VersionedSource(FakeSource):
    """A fake source that knows the installed versions."""

    def __init__(self, versions: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.versions = dict(versions)

    def installed_versions(self) -> Mapping[str, str]:
        return self.versions


def so_result(snippet: str, date: str | None = "2019-05-02T10:00:00+00:00") -> SearchResult:
    return SearchResult(
        title="Fill NaN in a DataFrame column",
        url="https://stackoverflow.com/q/1",
        snippet=snippet,
        source="stackoverflow",
        score=0.8,
        date=date,
        reference="stackoverflow:q1/a2",
    )


def prompts_of(llm: ScriptedChatModel, task: str) -> list[str]:
    return [message_text(messages[-1]) for name, messages in llm.calls if name == task]


async def answer_prompt(
    tmp_path: Path, question: str, results: list[SearchResult], language: str = "en"
) -> str:
    source = VersionedSource(VERSIONS)
    deps, llm = make_deps(tmp_path, {"generate_answer": "Use fillna [1]."}, [source])
    state: Any = {
        "question": question,
        "language": language,
        "intent": "learning",
        "filtered_results": results,
    }
    await generate_answer(state, deps)
    (prompt,) = prompts_of(llm, "generate_answer")
    return prompt


def test_the_fake_source_has_the_capability_and_a_plain_one_does_not() -> None:
    assert isinstance(VersionedSource({}), KnowsInstalledVersions)
    assert not isinstance(FakeSource(), KnowsInstalledVersions)
    merged = installed_versions([FakeSource(), VersionedSource({"Pandas": "2.1.4"})])
    assert merged == {"pandas": "2.1.4"}


async def test_the_prompt_states_the_version_of_a_named_library(tmp_path: Path) -> None:
    prompt = await answer_prompt(tmp_path, "How do I fill NaN values in pandas?", [doc(1)])
    assert '<excerpt of="installed packages">\npandas 2.1.4\n</excerpt>' in prompt
    assert LINE_EN in prompt
    assert "requests" not in prompt


async def test_no_version_line_for_a_question_naming_no_installed_library(
    tmp_path: Path,
) -> None:
    prompt = await answer_prompt(tmp_path, "How do I read a file line by line?", [doc(1)])
    assert LINE_EN not in prompt and "<excerpt" not in prompt


async def test_a_common_english_word_is_not_taken_for_the_package(tmp_path: Path) -> None:
    question = "How do I handle many incoming requests in a web server?"
    prompt = await answer_prompt(tmp_path, question, [doc(1)])
    assert LINE_EN not in prompt


async def test_the_korean_prompt_has_the_korean_line(tmp_path: Path) -> None:
    prompt = await answer_prompt(tmp_path, "pandas에서 NaN을 채우려면?", [doc(1)], "ko")
    assert prompts.INSTALLED["ko"] in prompt and "pandas 2.1.4" in prompt
    assert LINE_EN not in prompt


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I fill NaN in pandas?", [("pandas", "2.1.4")]),
        ("pandas에서 NaN을 채우려면?", [("pandas", "2.1.4")]),
        ("Pandas: merge two frames", [("pandas", "2.1.4")]),
        ("How does pandas-stubs type a DataFrame?", []),
        ("Too many requests to my API", []),
        ("Requests keeps timing out", []),
        ("Why does `requests.get` hang?", [("requests", "2.31.0")]),
        ("requests.get hangs forever", [("requests", "2.31.0")]),
        ("After pip install requests the import fails", [("requests", "2.31.0")]),
        ("Is the requests library thread-safe?", [("requests", "2.31.0")]),
        ("Retry with Requests in a session", [("requests", "2.31.0")]),
        ("sklearn train_test_split with scikit-learn", [("sklearn", "1.3.2"),
                                                          ("scikit-learn", "1.3.2")]),
    ],
)  # fmt: skip
def test_which_names_a_question_names(question: str, expected: list[tuple[str, str]]) -> None:
    assert names_in(question, VERSIONS) == expected


def test_names_shorter_than_three_characters_or_stopwords_never_match() -> None:
    assert names_in("Use np and the os module", {"np": "1.0", "the": "2.0", "os": "3"}) == []


async def test_an_older_major_stack_overflow_answer_shows_its_date(tmp_path: Path) -> None:
    old = so_result("In pandas 0.25 use df.fillna(method='ffill').")
    prompt = await answer_prompt(tmp_path, "How do I forward-fill NaN in pandas?", [old])
    assert 'title="Fill NaN in a DataFrame column (answered 2019-05-02, for pandas 0.25)"' in (
        prompt
    )


async def test_a_same_major_stack_overflow_answer_shows_no_date(tmp_path: Path) -> None:
    same = so_result("Since pandas 2.0 use df.ffill().")
    prompt = await answer_prompt(tmp_path, "How do I forward-fill NaN in pandas?", [same])
    assert 'title="Fill NaN in a DataFrame column"' in prompt and "answered" not in prompt


def test_the_date_rule_needs_a_named_library_and_a_stack_overflow_result() -> None:
    old = so_result("pandas==0.23.4 fillna")
    named = [("pandas", "2.1.4")]
    assert dated_title(old, named).endswith("(answered 2019-05-02, for pandas 0.23.4)")
    assert dated_title(old, []) == old["title"]
    assert dated_title({**old, "source": "github"}, named) == old["title"]
    assert dated_title(so_result("pandas 0.25", date=None), named).endswith("(for pandas 0.25)")
    assert dated_title(so_result("numpy 1.10 and pandas"), named) == old["title"]
    assert dated_title(so_result("pandas 1 column at a time"), named) == old["title"]


async def test_the_librarian_answer_states_the_version_and_dates_old_answers(
    tmp_path: Path,
) -> None:
    from codeweaver.agent.librarian.nodes import librarian_answer

    deps, llm = make_deps(
        tmp_path, {"librarian_answer": "Use fillna [1]."}, [VersionedSource(VERSIONS)]
    )
    old = so_result("In pandas 0.25 use df.fillna(0) on the column.")
    state: Any = {"question": "How do I fill NaN in a pandas column?", "search_results": [old]}
    await librarian_answer(state, deps)
    (prompt,) = prompts_of(llm, "librarian_answer")
    assert LINE_EN in prompt and "pandas 2.1.4" in prompt
    assert "answered 2019-05-02, for pandas 0.25" in prompt
