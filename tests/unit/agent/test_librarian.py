"""Librarian mode: the ReAct loop, its step limit, tool errors, shared sessions,
and the API and CLI that select it. Every model is scripted by task name."""

from __future__ import annotations

import json
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from codeweaver.agent.librarian import MAX_STEPS, build_librarian_graph
from codeweaver.agent.librarian.graph import LIBRARIAN_NODES
from codeweaver.agent.librarian.protocol import Decision
from codeweaver.agent.rules.input_check import UnknownModeError
from codeweaver.agent.runner import Assistant, RunEvent, RunResult
from codeweaver.agent.user_text import say
from codeweaver.cli.app import app as cli_app
from codeweaver.codecheck import ApiIndex, CodeChecker
from codeweaver.llm.scripted import Reply, ScriptedChatModel
from codeweaver.llm.structured import message_text
from tests.fakes import FakeSource, SourceError, doc, make_deps
from tests.servers import app_client

QUESTION = "How do I read a file line by line in Python?"
# Each sentence restates its source, so the grounding check passes by words alone.
ANSWER = "Iterate over the lines of a file with a for loop [1]. Each line keeps its newline [2]."
CHECK = '{"unsupported": [], "answers_question": true}'
SEARCH_NODE_OF = {"installed_docs": "search_official_docs", "stackoverflow": "search_stackoverflow"}


def decide(tool: str, text: str = "", thought: str = "") -> str:
    return json.dumps({"thought": thought, "tool": tool, "input": text})


def script(steps: Reply, answer: str = ANSWER, **extra: Reply) -> dict[str, Reply]:
    return {"librarian_step": steps, "librarian_answer": answer, "check_answer": CHECK, **extra}


async def run(
    assistant: Assistant, question: str = QUESTION, thread: str = "t1", mode: str = "librarian"
) -> tuple[list[RunEvent], RunResult]:
    events = [event async for event in assistant.stream(question, thread, mode)]
    result = events[-1].result
    assert result is not None
    return events, result


def prompts_of(llm: ScriptedChatModel, task: str) -> list[str]:
    """The user-side text of every prompt sent for `task`, in order."""
    return [message_text(messages[-1]) for name, messages in llm.calls if name == task]


def trail(events: list[RunEvent]) -> list[tuple[str, str]]:
    """(node, kind) of each step event, with a run of tokens shown once as ("", "token")."""
    out: list[tuple[str, str]] = []
    for event in events:
        if event.kind == "step" and event.step is not None:
            out.append((event.step["node"], event.step["kind"]))
        elif event.kind == "token" and out[-1:] != [("", "token")]:
            out.append(("", "token"))
    return out


async def test_think_search_answer_streams_steps_and_cites_what_was_found(
    tmp_path: Path,
) -> None:
    source = FakeSource(results=[doc(1), doc(2)])
    steps = [
        decide("think", "the docs of open() should cover it", "plan first"),
        decide("search_official_docs", "read file line by line", "look it up"),
        decide("answer", thought="the docs cover it"),
    ]
    deps, llm = make_deps(tmp_path, script(steps), sources=[source])
    events, result = await run(Assistant(deps))

    assert source.queries == ["read file line by line"]  # the model's query, as written
    assert trail(events) == [
        ("librarian_start", "think"),
        ("librarian_agent", "think"),
        ("think", "think"),
        ("librarian_agent", "think"),
        ("search_official_docs", "act"),
        ("search_official_docs", "observe"),
        ("librarian_agent", "think"),
        ("", "token"),
        ("librarian_answer", "observe"),
        ("librarian_check", "observe"),
        ("librarian_check", "observe"),
    ]
    messages = [e.step["message"] for e in events if e.step is not None]
    assert "the docs of open() should cover it" in messages
    assert "".join(e.text for e in events if e.kind == "token") == ANSWER
    assert result.answer == ANSWER  # checked, so no warning was added
    assert [s["url"] for s in result.sources] == [doc(1)["url"], doc(2)["url"]]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    assert cited == {1, 2}
    assert result.plan_case is None and result.question_type is None and not result.cache_keys
    assert llm.tasks()[:4] == ["librarian_step"] * 3 + ["librarian_answer"]
    # The model saw the numbered results it found, and the answer prompt lists them.
    third = prompts_of(llm, "librarian_step")[2]
    assert "<observation>\n2 results from installed_docs:\n[1] doc 1 — Open file" in third
    assert '<source n="2" title="doc 2">' in prompts_of(llm, "librarian_answer")[0]


async def test_the_loop_stops_after_ten_decisions_and_still_answers(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1), doc(2), doc(3)])
    deps, llm = make_deps(
        tmp_path, script(decide("search_official_docs", "open file")), sources=[source]
    )
    events, result = await run(Assistant(deps))

    assert MAX_STEPS == 10
    assert llm.tasks().count("librarian_step") == 10
    assert len(source.queries) == 10
    assert llm.tasks().count("librarian_answer") == 1 and result.answer == ANSWER
    limit = [s for s in result.steps if "step limit reached" in s["message"]]
    assert [(s["node"], s["kind"]) for s in limit] == [("librarian_agent", "think")]
    # The same three documents came back every time: numbered once, cited as [1]–[3].
    assert [s["title"] for s in result.sources] == ["doc 1", "doc 2", "doc 3"]
    assert "(3 seen before)" in prompts_of(llm, "librarian_step")[2]
    assert any(e.kind == "token" for e in events)


async def test_a_lower_step_limit_is_honoured(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, script(decide("think", "hmm"), answer="Use a for loop."))
    graph = build_librarian_graph(deps, InMemorySaver(), max_steps=3)
    final = await graph.ainvoke(
        {"question": QUESTION, "messages": [HumanMessage(QUESTION)]},
        {"configurable": {"thread_id": "limit"}},
    )
    assert llm.tasks().count("librarian_step") == 3
    assert any("step limit reached (3 steps)" in s["message"] for s in final["intermediate_steps"])
    assert final["answer"] == f"{say('no_source_note', 'en')}\n\nUse a for loop."
    with pytest.raises(ValueError, match="max_steps"):
        build_librarian_graph(deps, max_steps=0)


async def test_a_failing_source_is_an_error_step_and_the_loop_goes_on(tmp_path: Path) -> None:
    broken = FakeSource("stackoverflow", error=SourceError("rate limited"))
    docs_source = FakeSource(results=[doc(1), doc(2)])
    steps = [
        decide("search_stackoverflow", "python read lines"),
        decide("search_official_docs", "read lines"),
        decide("answer"),
    ]
    deps, llm = make_deps(tmp_path, script(steps), sources=[broken, docs_source])
    _, result = await run(Assistant(deps))

    errors = [s for s in result.steps if s["kind"] == "error"]
    assert [(s["node"], s["message"]) for s in errors] == [
        ("search_stackoverflow", "stackoverflow failed: rate limited")
    ]
    assert "error: stackoverflow failed: rate limited" in prompts_of(llm, "librarian_step")[1]
    assert docs_source.queries == ["read lines"]
    assert result.answer == ANSWER and len(result.sources) == 2


async def test_a_source_that_times_out_is_reported_to_the_model(tmp_path: Path) -> None:
    slow = FakeSource(results=[doc(1)], delay=1.0)
    steps = [decide("search_official_docs", "read lines"), decide("answer")]
    deps, llm = make_deps(tmp_path, script(steps, answer="Use a for loop."), sources=[slow])
    deps.source_timeout = 0.05
    _, result = await run(Assistant(deps))

    assert "error: installed_docs timed out after 0.05s" in prompts_of(llm, "librarian_step")[1]
    assert any(s["kind"] == "error" and "timed out" in s["message"] for s in result.steps)
    assert result.sources == []
    assert result.answer == f"{say('no_source_note', 'en')}\n\nUse a for loop."


async def test_an_unknown_tool_is_an_error_observation_naming_the_real_tools(
    tmp_path: Path,
) -> None:
    steps = [decide("search_google", "read lines"), decide("answer")]
    deps, llm = make_deps(tmp_path, script(steps, answer="Loop over the file."))
    _, result = await run(Assistant(deps))

    second = prompts_of(llm, "librarian_step")[1]
    assert "error: unknown tool 'search_google'; the tools are: think, search_official_docs" in (
        second
    )
    assert [(s["node"], s["kind"]) for s in result.steps if s["kind"] == "error"] == [
        ("librarian_tools", "error")
    ]
    assert say("no_source_note", "en") in result.answer  # nothing was found, and the answer says so


async def test_two_unusable_replies_in_a_row_go_to_the_answer(tmp_path: Path) -> None:
    replies = ["Let me think about it.", "still no JSON"]
    deps, llm = make_deps(tmp_path, script(replies, answer="Use a for loop."))
    _, result = await run(Assistant(deps))

    assert llm.tasks()[:3] == ["librarian_step", "librarian_step", "librarian_answer"]
    assert [s["kind"] for s in result.steps if s["node"] == "librarian_agent"] == [
        "error",
        "error",
        "think",
    ]
    assert "your reply was not usable" in prompts_of(llm, "librarian_step")[1]
    assert result.answer == f"{say('no_source_note', 'en')}\n\nUse a for loop."


async def test_a_usable_reply_resets_the_count_of_unusable_ones(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1)])
    steps = ["junk", decide("search_official_docs", "read lines"), "junk", decide("answer")]
    deps, llm = make_deps(tmp_path, script(steps, answer="Loop [1]."), sources=[source])
    _, result = await run(Assistant(deps))

    assert llm.tasks().count("librarian_step") == 4
    assert source.queries == ["read lines"]
    assert [s["url"] for s in result.sources] == [doc(1)["url"]]


async def test_a_failed_answer_still_ends_the_turn_with_the_sources(tmp_path: Path) -> None:
    def broken(messages: list[BaseMessage]) -> str:
        raise RuntimeError("model crashed")

    steps = [decide("search_official_docs", "read lines"), decide("answer")]
    deps, _ = make_deps(tmp_path, script(steps, answer=broken))
    _, result = await run(Assistant(deps))

    assert result.answer == "I could not write an answer (RuntimeError: model crashed)."
    assert len(result.sources) == 3
    assert ("librarian_answer", "error") in [(s["node"], s["kind"]) for s in result.steps]


def test_decisions_accept_what_small_models_write() -> None:
    loose = Decision.model_validate({"action": "Final_Answer", "action_input": None})
    assert (loose.tool, loose.input) == ("answer", "")
    nested = Decision.model_validate({"tool": "search_web", "input": {"query": "asyncio"}})
    assert (nested.tool, nested.input) == ("search_web", "asyncio")
    with pytest.raises(ValueError):
        Decision.model_validate({"thought": "no tool"})


async def test_a_source_name_without_the_search_prefix_is_understood(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1)])
    steps = [decide("official_docs", "read lines"), decide("answer")]
    deps, _ = make_deps(tmp_path, script(steps, answer="Loop [1]."), sources=[source])
    _, result = await run(Assistant(deps))
    assert source.queries == ["read lines"] and len(result.sources) == 1


async def test_an_unknown_mode_is_a_clear_error(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    with pytest.raises(UnknownModeError, match="pipeline, librarian"):
        await run(Assistant(deps), mode="oracle")


# --- shared sessions ------------------------------------------------------------------

FOLLOW_UP = "How do I skip empty lines while reading a file in Python?"
PIPELINE_ANSWER = "Iterate over the lines of a file with a for loop [1]."
LIBRARIAN_ANSWER = "Each line keeps its newline character [1]."


def both_modes_script() -> dict[str, Reply]:
    def rewrite(messages: list[BaseMessage]) -> str:
        return json.dumps({"question": FOLLOW_UP})

    return {
        "create_plan": '{"questions": []}',
        "analyze_question": json.dumps(
            {"question_type": "new_topic", "should_cache": False, "canonical_question": ""}
        ),
        "classify_intent": '{"intent": "learning"}',
        "rewrite_question": rewrite,
        "generate_answer": PIPELINE_ANSWER,
        "generate_with_history": PIPELINE_ANSWER,
        **script(
            [decide("search_official_docs", "skip empty lines"), decide("answer")],
            answer=LIBRARIAN_ANSWER,
        ),
    }


def history_prompts(llm: ScriptedChatModel, since: int) -> list[str]:
    """User-side texts of prompts sent after call `since` that carry a <history> block."""
    texts = [message_text(messages[-1]) for _, messages in llm.calls[since:]]
    return [t for t in texts if "<history>" in t]


async def test_a_librarian_turn_continues_a_pipeline_thread(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, both_modes_script(), cache_enabled=False)
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    _, first = await run(assistant, QUESTION, "shared", mode="pipeline")
    assert first.answer.startswith(PIPELINE_ANSWER) and first.plan_case is not None

    calls = len(llm.calls)
    _, second = await run(assistant, FOLLOW_UP, "shared", mode="librarian")
    step_prompt = prompts_of(llm, "librarian_step")[0]
    history = step_prompt.split("<history>")[1].split("</history>")[0]
    assert f"user: {QUESTION}" in history and f"assistant: {first.answer}" in history
    assert history_prompts(llm, calls)  # the answer prompt carries it too
    assert second.answer == LIBRARIAN_ANSWER
    # Nothing of the pipeline turn leaks into the librarian turn's steps or result.
    nodes = {s["node"] for s in second.steps}
    assert nodes <= {*LIBRARIAN_NODES, "search_official_docs"}, nodes
    assert second.plan_case is None and second.cache_keys == ()


async def test_a_pipeline_turn_continues_a_librarian_thread(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, both_modes_script(), cache_enabled=False)
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    _, first = await run(assistant, QUESTION, "shared", mode="librarian")
    assert first.answer == LIBRARIAN_ANSWER

    calls = len(llm.calls)
    _, second = await run(assistant, "Can you show me an example of that?", "shared", "pipeline")
    prompts = history_prompts(llm, calls)
    assert prompts, llm.tasks()[calls:]
    assert f"user: {QUESTION}" in prompts[0] and f"assistant: {LIBRARIAN_ANSWER}" in prompts[0]
    assert not {s["node"] for s in second.steps} & set(LIBRARIAN_NODES)
    state = await assistant.graph.aget_state({"configurable": {"thread_id": "shared"}})
    kinds = [m.type for m in state.values["messages"]]
    assert kinds == ["human", "ai", "human", "ai"]


# --- API and CLI ----------------------------------------------------------------------


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    event: dict[str, Any] = {}
    for line in lines:
        if not line and event:
            event["data"] = json.loads(event.get("data", "null"))
            yield event
            event = {}
        elif line and not line.startswith(":"):
            name, _, value = line.partition(":")
            event[name] = value.removeprefix(" ")


def test_api_streams_the_librarian_and_records_its_mode(tmp_path: Path) -> None:
    steps = [decide("search_official_docs", "read lines", "search the docs"), decide("answer")]
    deps, llm = make_deps(tmp_path, script(steps), sources=[FakeSource(results=[doc(1), doc(2)])])
    body = {"message": QUESTION, "mode": "librarian"}
    with app_client(deps) as api, api.stream("POST", "/api/chat/stream", json=body) as response:
        assert response.status_code == 200
        events = list(sse_events(response.iter_lines()))
        bad = api.post("/api/chat", json={**body, "mode": "oracle"})
        session = events[-1]["data"]["session_id"]
        history = api.get(f"/api/sessions/{session}").json()["history"]

    kinds = [e["event"] for e in events if e["event"] not in ("queue", "progress")]
    collapsed = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert collapsed[:5] == ["think", "act", "observe", "think", "token"], kinds
    # The same steps in words, streamed as they happen and kept in `done`.
    lines = [e["data"]["text"] for e in events if e["event"] == "progress"]
    assert lines == [
        "Understanding the question",
        "Searching installed docs…",
        "Found 2: installed docs 2",
        "Writing the answer",
        "Checked the citations: 2 of 2 supported",
    ]
    assert [line["text"] for line in events[-1]["data"]["progress"]] == lines
    assert kinds[-1] == "done" and "act" not in kinds[kinds.index("token") :]
    act = next(e["data"] for e in events if e["event"] == "act")
    assert act["node"] == "search_official_docs" and act["data"]["query"] == "read lines"
    done = events[-1]["data"]
    assert done["answer"] == ANSWER and [s["n"] for s in done["sources"]] == [1, 2]
    assert done["plan_case"] is None
    assert history[1]["mode"] == "librarian"
    assert "librarian_step" in llm.tasks() and "classify_intent" not in llm.tasks()
    assert bad.status_code == 422 and "mode" in bad.text


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_ask_in_librarian_mode(cli_env: Path) -> None:
    question = "How do I parse JSON in Python?"
    result = CliRunner().invoke(cli_app, ["ask", question, "--mode", "librarian", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    # No sources are configured here: the answer says so first, as the pipeline does.
    notice = say("no_source_note", "en")
    assert payload["answer"].startswith(f"{notice}\n\nScripted answer to: {question}")
    assert payload["plan_case"] is None
    assert [s["node"] for s in payload["steps"]][:2] == ["librarian_start", "librarian_agent"]


def test_cli_chat_in_librarian_mode_and_a_bad_mode(cli_env: Path) -> None:
    runner = CliRunner()
    chat = runner.invoke(
        cli_app, ["chat", "--mode", "librarian"], input="How do I parse JSON in Python?\n/exit\n"
    )
    assert chat.exit_code == 0, chat.output
    assert "Scripted answer to: How do I parse JSON in Python?" in chat.stdout
    bad = runner.invoke(cli_app, ["ask", "What is a venv?", "--mode", "oracle"])
    assert bad.exit_code == 2 and "oracle" in bad.output


async def test_the_librarian_notes_missing_apis_without_a_rewrite(tmp_path: Path) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    api = ApiIndex([stdlib], python_version="3.11")
    old = "Time it with `clock` [1].\n\n```python\nimport time\nstart = time.clock()\n```"
    steps = [decide("search_official_docs", "time a block"), decide("answer")]
    deps, llm = make_deps(tmp_path, script(steps, answer=old))
    deps.code_checker = CodeChecker(lambda: api)
    _, result = await run(Assistant(deps))

    assert [name for name, _ in llm.calls].count("librarian_answer") == 1  # no rewrite
    assert "> ⚠ `time.clock` does not exist in Python 3.11, installed here." in result.answer
    assert [f["name"] for f in result.code_findings] == ["time.clock"]
    checks = [s["message"] for s in result.steps if s["node"] == "librarian_check"]
    assert any(m.startswith("code check: 1 API use in 1 code block") for m in checks)
