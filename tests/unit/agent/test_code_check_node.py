"""check_answer's code check in the graph: one rewrite with the facts when the answer's
code uses an API missing at the installed versions, then a note under the block (in the
question's language) and `code_findings`; clean code costs no model call."""

from __future__ import annotations

import json
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import pytest

from codeweaver.agent.nodes.code_review import code_note
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from codeweaver.codecheck import ApiIndex, BlockFinding, CodeChecker, Finding, NpmApi
from tests.fakes import FakeSource, make_deps

OLD = "Use `time.clock()`:\n\n```python\nimport time\nstart = time.clock()\n```\n"
NEW = "Use `time.perf_counter()`:\n\n```python\nimport time\nstart = time.perf_counter()\n```\n"


@pytest.fixture(scope="module")
def checker() -> CodeChecker:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    api = ApiIndex([stdlib], python_version="3.11")
    return CodeChecker(lambda: api)


def _assistant(tmp_path: Path, drafts: list[str], checker: CodeChecker) -> tuple[Assistant, object]:
    script = {
        "analyze_question": '{"canonical_question": "How do I time code in Python?"}',
        "generate_answer": drafts,
    }
    deps, llm = make_deps(tmp_path, script, [FakeSource(results=[])])
    deps.code_checker = checker
    return Assistant(deps), llm


async def test_missing_api_gets_one_rewrite_with_the_facts(
    tmp_path: Path, checker: CodeChecker
) -> None:
    assistant, llm = _assistant(tmp_path, [OLD, NEW], checker)
    result = await assistant.ask("How do I measure elapsed time in Python?")
    assert llm.tasks().count("generate_answer") == 2  # type: ignore[attr-defined]
    second = llm.calls[-1][1][-1].content  # type: ignore[attr-defined]
    assert "`time.clock` does not exist in Python 3.11" in second
    assert "time.perf_counter()" in result.answer and "time.clock" not in result.answer
    assert result.code_findings == ()
    notes = [s["message"] for s in result.steps if s["node"] == "check_answer"]
    assert any("rewriting the code without time.clock" in n for n in notes)
    summary = "code check: 1 API use in 1 code block checked"
    assert any(n.startswith(summary) and n.endswith("0 missing or misused") for n in notes)


async def test_what_the_rewrite_keeps_is_noted_under_its_block(
    tmp_path: Path, checker: CodeChecker
) -> None:
    assistant, llm = _assistant(tmp_path, [OLD, OLD], checker)
    result = await assistant.ask("How do I measure elapsed time in Python?")
    assert llm.tasks().count("generate_answer") == 2  # type: ignore[attr-defined]
    block_end = result.answer.index("```\n", result.answer.index("```python") + 3) + 4
    assert (
        result.answer[block_end:]
        .lstrip()
        .startswith("> ⚠ `time.clock` does not exist in Python 3.11, installed here.")
    )
    assert [f["name"] for f in result.code_findings] == ["time.clock"]
    assert result.code_findings[0]["block"] == 1 and result.code_findings[0]["line"] == 2
    assert "time.clock" in result.to_dict()["code_findings"][0]["name"]
    assert any("not cached" in s["message"] for s in result.steps)


async def test_the_note_speaks_the_question_s_language(
    tmp_path: Path, checker: CodeChecker
) -> None:
    assistant, _ = _assistant(tmp_path, [OLD, OLD], checker)
    result = await assistant.ask("파이썬에서 경과 시간을 어떻게 재나요?")
    assert "`time.clock`은(는) 여기 설치된 Python 3.11에 없습니다." in result.answer


async def test_clean_code_costs_no_rewrite(tmp_path: Path, checker: CodeChecker) -> None:
    assistant, llm = _assistant(tmp_path, [NEW], checker)
    result = await assistant.ask("How do I measure elapsed time in Python?")
    assert llm.tasks().count("generate_answer") == 1  # type: ignore[attr-defined]
    assert result.answer.strip().endswith("```") and result.code_findings == ()


async def test_two_questions_report_each_section_s_findings(
    tmp_path: Path, checker: CodeChecker
) -> None:
    plan = json.dumps({"questions": ["What is JWT?", "What is CORS?"]})
    script = {
        "analyze_question": '{"canonical_question": "How do I time code in Python?"}',
        "create_plan": plan,
        "generate_answer": lambda messages: OLD,  # both sections, every draft
    }
    deps, _ = make_deps(tmp_path, script, [FakeSource(results=[])])
    deps.code_checker = checker
    result = await Assistant(deps).ask("What is JWT? What is CORS?")
    assert "## 2." in result.answer
    assert result.answer.count("> ⚠ `time.clock` does not exist") == 2
    assert sorted((f["section"], f["name"]) for f in result.code_findings) == [
        (1, "time.clock"), (2, "time.clock"),
    ]  # fmt: skip


JS_OLD = "Use:\n\n```jsx\nimport { Switch, Route } from 'router';\n```\n"
JS_NEW = "Use:\n\n```jsx\nimport { Routes, Route } from 'router';\n```\n"


@pytest.fixture
def js_checker(tmp_path: Path) -> CodeChecker:
    package = tmp_path / "node_modules" / "router"
    package.mkdir(parents=True)
    manifest = {"name": "router", "version": "7.1.0", "types": "index.d.ts"}
    (package / "package.json").write_text(json.dumps(manifest))
    (package / "index.d.ts").write_text(
        "export declare function Routes(): null;\nexport declare function Route(): null;\n"
    )

    def no_python() -> ApiIndex:
        raise AssertionError("a JavaScript answer never loads the Python index")

    return CodeChecker(no_python, lambda: NpmApi(tmp_path / "node_modules"))


async def test_a_javascript_block_is_checked_against_node_modules(
    tmp_path: Path, js_checker: CodeChecker
) -> None:
    assistant, llm = _assistant(tmp_path, [JS_OLD, JS_NEW], js_checker)
    result = await assistant.ask("How do I declare routes in React Router?")
    assert llm.tasks().count("generate_answer") == 2  # type: ignore[attr-defined]
    second = llm.calls[-1][1][-1].content  # type: ignore[attr-defined]
    assert "`router` exports no `Switch` in router 7.1.0" in second
    assert "Routes" in result.answer and result.code_findings == ()


async def test_a_kept_javascript_name_is_noted(tmp_path: Path, js_checker: CodeChecker) -> None:
    assistant, _ = _assistant(tmp_path, [JS_OLD, JS_OLD], js_checker)
    result = await assistant.ask("How do I declare routes in React Router?")
    assert "> ⚠ `router.Switch` does not exist in router 7.1.0, installed here." in result.answer
    assert [(f["name"], f["line"]) for f in result.code_findings] == [("router.Switch", 1)]


def test_the_note_quotes_what_the_library_says() -> None:
    finding = Finding("numpy.float_", 2, "…", "missing", "numpy.float_", "", "numpy 2.1.3")
    item = BlockFinding(1, finding, ("float16", "float32"), ("Use `np.float64` instead.",))
    assert code_note(item, "en") == (
        "`numpy.float_` does not exist in numpy 2.1.3, installed here. Existing names: "
        "`float16`, `float32`. The installed library says: Use `np.float64` instead."
    )
    assert code_note(item, "ko").endswith("설치된 라이브러리의 설명: Use `np.float64` instead.")


class DocsWithPages(FakeSource):
    """The installed docs: nothing found by the search, a page per API by name."""

    def api_pages(self, names: Sequence[str]) -> list[SearchResult]:
        return [
            SearchResult(title=f"{n} — Python 3.11", url=f"https://docs.python.org/3.11/#{n}",
                         snippet="…", source="installed_docs", score=1.0, date=None,
                         reference=f"python:{n}@3.11", api=n, api_kind="function")
            for n in names if n == "time.perf_counter"
        ]  # fmt: skip


async def test_the_final_code_s_apis_are_cited_to_their_installed_pages(
    tmp_path: Path, checker: CodeChecker
) -> None:
    script = {
        "analyze_question": '{"canonical_question": "How do I time code in Python?"}',
        "generate_answer": [NEW],
    }
    deps, _ = make_deps(tmp_path, script, [DocsWithPages(results=[])])
    deps.code_checker = checker
    result = await Assistant(deps).ask("How do I measure elapsed time in Python?")
    assert result.answer.startswith("Use `time.perf_counter()` [1]:")
    assert [s["reference"] for s in result.sources] == ["python:time.perf_counter@3.11"]


def test_the_note_on_python_2_code() -> None:
    message = "this is Python 2 code (Missing parentheses in call to 'print'. Did you mean print(...)?); it does not run on Python 3.11, installed here"  # noqa: E501
    finding = Finding("python2:print", 1, message, "syntax", "", "", "Python 3.11")
    assert code_note(BlockFinding(1, finding), "en") == (
        "This is Python 2 code (Missing parentheses in call to 'print'. Did you mean "
        "print(...)?): it does not run on Python 3.11, installed here."
    )
