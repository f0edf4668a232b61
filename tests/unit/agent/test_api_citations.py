"""API pages are cited where the answer's code uses their API, never put in the prompt.

Questions and reference snippets from CoNaLa train (question ids given; CC BY-SA 4.0);
the answers are the embedded model's bare answers to them, shortened.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from codeweaver.agent.answering.api_citations import (
    answer_code,
    cite_checked_apis,
    cite_used_apis,
    uncite_namesakes,
    uses_api,
)
from codeweaver.agent.answering.grounding import check_grounding
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from codeweaver.agent.user_text import say
from codeweaver_eval.prompts import bare_messages
from tests.fakes import FakeSource, make_deps


def api_page(api: str, kind: str) -> SearchResult:
    return SearchResult(
        title=f"{api} — Python 3.11.7",
        url=f"https://docs.python.org/3.11/library/x.html#{api}",
        snippet=f"The documentation of {api}, as its docstring gives it.",
        source="installed_docs",
        score=0.3,
        api=api,
        api_kind=kind,
    )


# CoNaLa 577234, "Python "extend" for a dictionary" (reference `a.update(b)`): the search
# found `list.extend`, and with it in the prompt the model explained lists.
EXTEND_ANSWER = """In Python, the `extend` method is not directly available for \
dictionaries. However, you can achieve a similar effect by using the `update` method.

```python
my_dict = {'a': 1, 'b': 2}
another_dict = {'c': 3, 'd': 4}
my_dict.update(another_dict)
```"""


def test_a_page_of_an_api_the_code_does_not_use_is_not_cited() -> None:
    pages = [api_page("builtins.list.extend", "method")]
    answer, cited = cite_used_apis(EXTEND_ANSWER, pages, 1)
    assert (answer, cited) == (EXTEND_ANSWER, [])


def test_the_page_of_the_method_the_code_calls_is_cited_on_the_sentence_naming_it() -> None:
    pages = [api_page("builtins.list.extend", "method"), api_page("builtins.dict.update", "method")]
    answer, cited = cite_used_apis(EXTEND_ANSWER, pages, 3)
    assert [c["api"] for c in cited] == ["builtins.dict.update"]
    assert "by using the `update` method [3].\n\n```python" in answer
    assert "available for dictionaries." in answer  # the other sentence is untouched


def test_numbering_continues_after_the_prompt_sources_and_skips_unused_pages() -> None:
    # CoNaLa 275018, "remove (chomp) a newline" (reference `s.rstrip()`).
    answer = "Use `rstrip()` to remove a trailing newline:\n\n```python\ntext.rstrip()\n```"
    pages = [api_page("builtins.input", "function"), api_page("builtins.str.rstrip", "method")]
    cited_answer, cited = cite_used_apis(answer, pages, 2)
    assert [c["api"] for c in cited] == ["builtins.str.rstrip"]
    assert cited_answer.startswith("Use `rstrip()` to remove a trailing newline [2]:")


def test_a_used_api_no_sentence_names_is_not_cited() -> None:
    answer = "Split it with a pattern:\n\n```python\nre.split(r'\\W+', text)\n```"
    assert cite_used_apis(answer, [api_page("re.split", "function")], 1) == (answer, [])


def test_a_citation_does_not_break_a_list_item_or_land_inside_code() -> None:
    answer = "Two ways:\n- `a.update(b)`: in place\n- `{**a, **b}` makes a new dict"
    cited_answer, cited = cite_used_apis(
        answer + "\n\n```python\na.update(b)\n```", [api_page("builtins.dict.update", "method")], 1
    )
    assert len(cited) == 1
    assert cited_answer.startswith("Two ways:\n- `a.update(b)` [1]: in place\n- `{**a, **b}`")


@pytest.mark.parametrize(
    ("code", "api", "kind", "used"),
    [
        # CoNaLa 3277503, "read a file line by line into a list"
        ("with open('f') as f:\n    lines = f.readlines()", "builtins.open", "function", True),
        ("fd = os.open('f', os.O_RDONLY)", "builtins.open", "function", False),
        # CoNaLa 1059559, "Split Strings with Multiple Delimiters?" (its answers use re.split)
        ("re.split(r'[;,]', s)", "re.split", "function", True),
        ("s.split(',')", "re.split", "function", False),
        ("from re import split\nsplit(r'[;,]', s)", "re.split", "function", True),
        # CoNaLa 20638006, "Convert list of dictionaries to Dataframe"
        ("df = pd.DataFrame(rows)", "pandas.DataFrame", "class", True),
        ("df = pd.read_csv(path)", "pandas.DataFrame", "class", False),
        # "How do I read a CSV file with pandas and skip the first two rows?": the module
        # under its alias, as nearly every pandas and NumPy answer writes it
        (
            "import pandas as pd\ndf = pd.read_csv(path, skiprows=2)",
            "pandas.read_csv",
            "function",
            True,
        ),
        ("import numpy as pd\ndf = pd.read_csv(path)", "pandas.read_csv", "function", False),
        ("df = pd.read_csv(path)", "pandas.read_csv", "function", False),  # no import seen
        ("import itertools\nitertools.chain(a, b)", "itertools", "module", True),
        ("chain(a, b)", "itertools", "module", False),
    ],
)
def test_what_counts_as_using_an_api(code: str, api: str, kind: str, used: bool) -> None:
    assert uses_api(code, api, kind) is used


def test_the_code_of_an_answer_is_its_blocks_and_spans() -> None:
    code = answer_code("Call `a.update(b)`.\n\n```python\nx = 1\n```\nupdate in prose")
    assert "a.update(b)" in code and "x = 1" in code and "prose" not in code


async def test_a_citation_by_name_stands_in_the_grounding_check() -> None:
    answer, cited = cite_used_apis(EXTEND_ANSWER, [api_page("builtins.dict.update", "method")], 1)
    report = await check_grounding(None, "Python extend for a dictionary", answer, cited)
    assert report.passed and not report.removed
    assert report.verdicts[0].reason == "its code uses the API the cited page documents"


async def test_the_graph_answers_with_the_bare_prompt_and_cites_the_page_it_used(
    tmp_path: Path,
) -> None:
    question = 'Python "extend" for a dictionary'
    pages = [api_page("builtins.list.extend", "method"), api_page("builtins.dict.update", "method")]
    deps, llm = make_deps(tmp_path, {"generate_answer": EXTEND_ANSWER}, [FakeSource(results=pages)])
    result = await Assistant(deps).ask(question)
    (_task, messages), *_ = [c for c in llm.calls if c[0] == "generate_answer"]
    assert [m.content for m in messages] == [m.content for m in bare_messages(question)]
    assert [s.get("api") for s in result.sources] == ["builtins.dict.update"]
    assert "`update` method [1]." in result.answer
    assert say("no_source_note", "en") not in result.answer


class PagesByName:
    """A source with a page per API, as the installed docs index has."""

    name = "installed_docs"

    def __init__(self, apis: list[str]) -> None:
        self.pages = {api: api_page(api, "function") for api in apis}

    def api_pages(self, names: Sequence[str]) -> list[SearchResult]:
        return [self.pages[n] for n in names if n in self.pages]


def test_the_checked_apis_are_cited_where_named_else_on_the_code_s_introduction() -> None:
    answer = (
        "Time it with `perf_counter`:\n\n```python\nimport time, json\n"
        "start = time.perf_counter()\nprint(json.dumps(data))\n```"
    )
    docs = PagesByName(["time.perf_counter", "json.dumps", "re.split"])
    prompt_source = api_page("json.loads", "function") | {"source": "stackoverflow"}
    cited, sources = cite_checked_apis(
        answer, [prompt_source], ["time.perf_counter", "json.dumps", "os.getcwd"], [docs]
    )
    # `perf_counter` is named in prose; `json.dumps` only in the code: its introduction.
    assert cited.startswith("Time it with `perf_counter` [2] [3]:\n\n```python")
    assert [s.get("api") for s in sources] == ["json.loads", "time.perf_counter", "json.dumps"]


def test_a_page_already_among_the_sources_is_not_cited_twice() -> None:
    answer = "Use `dumps` [1]:\n\n```python\njson.dumps(x)\n```"
    page = api_page("json.dumps", "function")
    assert cite_checked_apis(answer, [page], ["json.dumps"], [PagesByName(["json.dumps"])]) == (
        answer,
        [page],
    )


def test_a_page_of_a_namesake_of_a_missing_method_is_uncited() -> None:
    # The embedded model's answer from a pandas 2.2.3 project: the search found
    # `HDFStore.append`, whose `.append(` the code seems to use; the check knows the code
    # calls `DataFrame.append`, which does not exist there.
    answer = (
        "Use the `append` method [1] [2]. Here `DataFrame` [2] holds the rows:\n\n"
        "```python\ndf = df.append(new_row, ignore_index=True)  # [1]\n```"
    )
    pages = [api_page("pandas.HDFStore.append", "method"), api_page("pandas.DataFrame", "class")]
    fixed, kept = uncite_namesakes(answer, pages, ["pandas.DataFrame.append"], ["pandas.DataFrame"])
    assert fixed.startswith("Use the `append` method [1]. Here `DataFrame` [1] holds")
    assert "# [1]" in fixed  # code is left alone
    assert [p["api"] for p in kept] == ["pandas.DataFrame"]
    assert uncite_namesakes(answer, pages, [], []) == (answer, pages)
