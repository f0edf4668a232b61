"""Every route of the pipeline graph, driven by scripted chat models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from codeweaver.agent.rules.input_check import InvalidQuestionError
from codeweaver.agent.runner import Assistant
from codeweaver.agent.user_text import say
from codeweaver.sources.base import SourceError
from codeweaver.sources.index_files import IndexBuilding
from tests.fakes import FakeSource, doc, docs, make_deps

ANALYZE_NEW = json.dumps(
    {
        "question_type": "new_topic",
        "should_cache": True,
        "canonical_question": "how to read a file line by line in python",
    }
)
INTENT_LEARNING = '{"intent": "learning"}'
ANSWER = "Use `open()` and iterate over the file object [1]. Each line keeps its newline [2]."


def base_script(**overrides: object) -> dict[str, object]:
    script: dict[str, object] = {
        "analyze_question": ANALYZE_NEW,
        "classify_intent": INTENT_LEARNING,
        "generate_answer": ANSWER,
    }
    script.update(overrides)
    return script


def nodes_of(result_steps: list[dict[str, object]]) -> list[str]:
    return [str(s["node"]) for s in result_steps]


async def test_single_question_searches_and_cites(tmp_path: Path) -> None:
    source = FakeSource()
    deps, llm = make_deps(tmp_path, base_script(), [source])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")

    assert result.plan_case == "single_topic"
    assert result.answer == ANSWER
    assert [s["url"] for s in result.sources] == [d["url"] for d in docs(3)]
    # The obvious single question is planned by rule, its intent is read by rule, and an
    # English question needs no translation for its cache key: one model call in all.
    assert llm.tasks() == ["generate_answer"]
    assert source.queries == ["How do I read a file line by line in Python?"]
    steps = nodes_of(result.steps)
    for node in (
        "search_stackoverflow",
        "search_github",
        "search_official_docs",
        "collect_results",
        "evaluate_results",
        "filter_and_score",
        "summarize_results",
        "generate_answer",
    ):
        assert node in steps
    skipped = [s["message"] for s in result.steps if s["node"] == "search_github"]
    assert skipped == ["skipped: github: not configured"]


async def test_citations_to_unlisted_sources_are_removed(tmp_path: Path) -> None:
    grounded = "Iterate over the lines of a file with a for loop [1]."
    deps, _ = make_deps(tmp_path, base_script(generate_answer=f"{grounded} Invented [7]."))
    result = await Assistant(deps).ask("How do I read a file?")
    assert result.answer == f"{grounded} Invented."


async def test_two_questions_run_isolated_workers_and_combine(tmp_path: Path) -> None:
    message = "JWT가 뭐야? CORS 에러는 어떻게 해결해?"
    plan = json.dumps(
        {"questions": ["JWT가 뭐야?", "CORS 에러는 어떻게 해결해?"]},
        ensure_ascii=False,
    )

    def analyze(messages: list[object]) -> str:
        text = str(messages[-1].content)  # type: ignore[attr-defined]
        if "JWT" in text:
            return (
                '{"question_type": "new_topic", "should_cache": true, '
                '"canonical_question": "what is jwt"}'
            )
        return (
            '{"question_type": "independent", "should_cache": false, '
            '"canonical_question": "how to fix cors errors"}'
        )

    def answer(messages: list[object]) -> str:
        text = str(messages[-1].content)  # type: ignore[attr-defined]
        # The draft is written from the question's English form.
        return "JWT는 토큰입니다 [1]." if "jwt" in text.lower() else "CORS 헤더를 설정하세요 [1]."

    jwt_docs = [doc(1, text="JSON Web Token is a compact token format. " * 3)]
    cors_docs = [doc(2, text="Cross-origin resource sharing headers. " * 3)]
    # Each question is also searched in its English form (multi-query): same documents.
    source = FakeSource(
        per_query={
            "JWT가 뭐야?": jwt_docs * 1 + [doc(3)],
            "what is jwt": [doc(3)],
            "CORS 에러는 어떻게 해결해?": [*cors_docs, doc(4)],
            "how to fix cors errors": [*cors_docs],
        }
    )
    deps, llm = make_deps(
        tmp_path,
        base_script(create_plan=plan, analyze_question=analyze, generate_answer=answer),
        [source],
    )
    result = await Assistant(deps).ask(message)

    assert result.plan_case == "multiple_questions"
    assert result.answer.startswith(f"> {message}")
    assert (
        "## 1. JWT가 뭐야?" in result.answer and "## 2. CORS 에러는 어떻게 해결해?" in result.answer
    )
    assert result.answer.index("## 1.") < result.answer.index("---") < result.answer.index("## 2.")
    # Section 2's citation is renumbered past section 1's sources, then the cited
    # sources come first: JWT's [1], CORS's [3] → [2], the two uncited after them.
    assert "JWT는 토큰입니다 [1]" in result.answer
    assert "CORS 헤더를 설정하세요 [2]" in result.answer
    assert len(result.sources) == 4
    assert result.sources[0]["url"] == jwt_docs[0]["url"]
    assert result.sources[1]["url"] == cors_docs[0]["url"]
    assert sorted(source.queries) == sorted(
        ["JWT가 뭐야?", "what is jwt", "CORS 에러는 어떻게 해결해?", "how to fix cors errors"]
    )
    assert llm.tasks().count("generate_answer") == 2
    # Each worker kept its own scalar channels: each answer is cached under its own key.
    jwt, cors = deps.cache.lookup("what is jwt"), deps.cache.lookup("how to fix cors errors")
    assert jwt is not None and jwt.answer == "JWT는 토큰입니다 [1]."
    assert cors is not None and cors.answer == "CORS 헤더를 설정하세요 [1]."
    assert any(n.startswith("Q1/") for n in nodes_of(result.steps))
    assert any(n.startswith("Q2/") for n in nodes_of(result.steps))


async def test_too_many_by_guard_never_calls_the_model(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, {})
    result = await Assistant(deps).ask("JWT? CORS? Docker?")
    assert result.plan_case == "too_many"
    assert llm.tasks() == []
    assert "JWT?" in result.answer and "Docker?" in result.answer
    assert "Merge" in result.answer and "one after another" in result.answer


async def test_too_many_by_model(tmp_path: Path) -> None:
    plan = '{"questions": ["JWT", "CORS", "Docker"]}'
    deps, llm = make_deps(tmp_path, {"create_plan": plan})
    result = await Assistant(deps).ask("Explain JWT and also CORS, and Docker networking")
    assert llm.tasks() == ["create_plan"]
    assert result.plan_case == "too_many"
    assert "- Docker" in result.answer


async def test_invalid_plan_json_falls_back_to_single_topic(tmp_path: Path) -> None:
    deps, _llm = make_deps(tmp_path, base_script(create_plan="I think it's two questions!"))
    result = await Assistant(deps).ask("What is JWT and how does OAuth use it?")
    assert result.plan_case == "single_topic"
    errors = [s for s in result.steps if s["node"] == "create_plan" and s["kind"] == "error"]
    assert errors and "fell back" in str(errors[0]["message"])
    assert result.answer == ANSWER


async def test_cache_hit_skips_search_and_generation(tmp_path: Path) -> None:
    source = FakeSource()
    deps, llm = make_deps(tmp_path, base_script(), [source])
    assistant = Assistant(deps)
    first = await assistant.ask("How do I read a file line by line in Python?")
    assert deps.cache.lookup("How do I read a file line by line in Python?") is not None

    second = await assistant.ask("how do i read a file line-by-line in python")
    assert second.answer == first.answer
    assert second.sources == first.sources
    assert "return_cached_answer" in nodes_of(second.steps)
    assert llm.tasks() == ["generate_answer"]  # the hit cost no model call
    assert "classify_intent" not in nodes_of(second.steps)
    assert len(source.queries) == 1


async def test_uncacheable_question_is_not_stored(tmp_path: Path) -> None:
    analyze = (
        '{"question_type": "new_topic", "should_cache": false, '
        '"canonical_question": "why does my build fail"}'
    )
    deps, _llm = make_deps(tmp_path, base_script(analyze_question=analyze))
    await Assistant(deps).ask("Why does my build fail?")
    assert deps.cache.stats().entries == 0


async def test_refines_once_when_results_are_weak(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1, score=0.1)])
    deps, llm = make_deps(tmp_path, base_script(), [source])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")

    # One result, and off topic: the second round broadens the query by rule, at no
    # model call, to its core terms.
    assert "refine_search" not in llm.tasks()
    assert source.queries == [
        "How do I read a file line by line in Python?",
        "read file line Python",
    ]
    # Intent is kept across the refinement loop: read once, by rule, never by the model.
    intents = [s["message"] for s in result.steps if s["node"] == "classify_intent"]
    assert [m.split(";")[0] for m in intents if "skipped" not in m] == [
        "learning (rules)",
        "learning (kept)",
    ]
    assert "classify_intent" not in llm.tasks()
    evaluations = [s["message"] for s in result.steps if s["node"] == "evaluate_results"]
    assert evaluations[0].startswith("refine:")
    assert "already refined once" in evaluations[1]
    # The only result scored too low to cite: no sources, so no citations either, and
    # the notice says a result was found but none was relevant.
    assert result.sources == []
    uncited = ANSWER.replace(" [1]", "").replace(" [2]", "")
    assert result.answer == f"{say('no_relevant_note', 'en', count=1)}\n\n{uncited}"


async def test_off_topic_results_get_a_more_specific_query_from_the_model(
    tmp_path: Path,
) -> None:
    source = FakeSource(results=[doc(1, score=0.1), doc(2, score=0.12)])
    refine = '{"query": "python open file readline"}'
    deps, llm = make_deps(tmp_path, base_script(refine_search=refine), [source])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert llm.tasks().count("refine_search") == 1
    assert source.queries[-1] == "python open file readline"
    refined = [s["message"] for s in result.steps if s["node"] == "refine_search"]
    assert refined[0].startswith("MORE_SPECIFIC")


async def test_offline_sources_alone_are_not_asked_again(tmp_path: Path) -> None:
    # Off-topic results from an offline corpus and an online source that is unreachable:
    # a second round could only ask the same corpus again, so none runs.
    docs_source = FakeSource(results=[doc(1, score=0.1), doc(2, score=0.12)])
    docs_source.offline = True  # type: ignore[attr-defined]
    down = FakeSource("stackoverflow", error=SourceError("network: unreachable"))
    refine = '{"query": "python open file readline"}'
    deps, llm = make_deps(tmp_path, base_script(refine_search=refine), [docs_source, down])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert "refine_search" not in llm.tasks() and "refine_search" not in nodes_of(result.steps)
    (evaluation,) = [s["message"] for s in result.steps if s["node"] == "evaluate_results"]
    assert evaluation.startswith("proceed:") and "no online source answered" in evaluation
    assert "python open file readline" not in docs_source.queries


async def test_an_answer_written_while_an_index_is_made_is_not_cached(tmp_path: Path) -> None:
    building = FakeSource(error=IndexBuilding("installed_docs: building the docs index: saving"))
    online = FakeSource("stackoverflow", results=[doc(1, score=0.9)])
    deps, _llm = make_deps(tmp_path, base_script(), [building, online])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    skipped = [s for s in result.steps if s["node"] == "search_official_docs"]
    assert any(s["message"].startswith("skipped: installed_docs is not ready") for s in skipped)
    assert not any(s["kind"] == "error" for s in skipped)  # not a failure
    (final,) = [
        s for s in result.steps if s["node"] == "check_answer" and "written" in s["message"]
    ]
    assert "not cached (installed_docs not ready)" in final["message"]
    assert deps.cache.stats().entries == 0
    # Once the index is made, the same question's answer is cached as usual.
    deps.sources["installed_docs"] = FakeSource(results=[doc(2, score=0.9)])
    await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert deps.cache.stats().entries == 1


async def test_an_online_source_that_answered_is_asked_again(tmp_path: Path) -> None:
    docs_source = FakeSource(results=[doc(1, score=0.1)])
    docs_source.offline = True  # type: ignore[attr-defined]
    online = FakeSource("stackoverflow", results=[doc(2, score=0.12)])
    refine = '{"query": "python open file readline"}'
    deps, llm = make_deps(tmp_path, base_script(refine_search=refine), [docs_source, online])
    await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert llm.tasks().count("refine_search") == 1
    assert online.queries[-1] == "python open file readline"


async def test_relevant_results_are_never_refined(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1, score=0.9)])
    deps, llm = make_deps(tmp_path, base_script(), [source])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert len(source.queries) == 1
    assert "refine_search" not in nodes_of(result.steps)
    assert llm.tasks() == ["generate_answer"]


async def test_a_broader_query_that_is_the_query_already_is_not_searched(tmp_path: Path) -> None:
    source = FakeSource(results=[])
    deps, _llm = make_deps(tmp_path, base_script(), [source])
    result = await Assistant(deps).ask("pandas groupby rolling mean")
    assert source.queries == ["pandas groupby rolling mean"]
    evaluations = [s["message"] for s in result.steps if s["node"] == "evaluate_results"]
    assert evaluations == ["proceed: nothing relevant in 0 results; a broader query would "
                           "find the same, going on"]  # fmt: skip


async def test_korean_question_searches_its_english_form_first_then_broadens(
    tmp_path: Path,
) -> None:
    source = FakeSource(results=[])
    analyze = (
        '{"question_type": "new_topic", "should_cache": true, '
        '"canonical_question": "how to read a file line by line in python"}'
    )
    deps, llm = make_deps(tmp_path, base_script(analyze_question=analyze), [source])
    result = await Assistant(deps).ask("파이썬에서 파일을 한 줄씩 읽으려면?")
    # The English form is a variation of the first round; the second broadens it.
    assert source.queries == [
        "파이썬에서 파일을 한 줄씩 읽으려면?",
        "how to read a file line by line in python",
        "read file line python",
    ]
    assert "refine_search" not in llm.tasks()
    refine = [s["message"] for s in result.steps if s["node"] == "refine_search"]
    assert refine and refine[0].startswith("MORE_GENERAL")


async def test_failing_source_is_reported_and_answer_still_comes(tmp_path: Path) -> None:
    broken = FakeSource(error=SourceError("index is corrupted"))
    deps, _llm = make_deps(
        tmp_path, base_script(refine_search='{"query": "read file lines"}'), [broken]
    )
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    errors = [s["message"] for s in result.steps if s["kind"] == "error"]
    # Reported once: a source that failed is not asked again, nothing new could come.
    assert sum("index is corrupted" in str(m) for m in errors) == 1
    assert "refine_search" not in nodes_of(result.steps)
    # No sources: the answer keeps its text but loses citations that point nowhere.
    uncited = "Use `open()` and iterate over the file object. Each line keeps its newline."
    assert result.answer == f"{say('no_source_note', 'en')}\n\n{uncited}"
    assert result.sources == []


async def test_slow_source_times_out(tmp_path: Path) -> None:
    slow = FakeSource(delay=5.0)
    deps, _ = make_deps(tmp_path, base_script(), [slow])
    deps.source_timeout = 0.1
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert any("timed out" in str(s["message"]) for s in result.steps)


async def test_model_failure_in_generation_returns_sources(tmp_path: Path) -> None:
    def boom(messages: list[object]) -> str:
        raise RuntimeError("model crashed")

    deps, _ = make_deps(tmp_path, base_script(generate_answer=boom))
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert "could not write an answer" in result.answer
    assert "[1] doc 1" in result.answer
    assert deps.cache.stats().entries == 0


async def test_clarification_uses_history_without_cache_or_search(tmp_path: Path) -> None:
    source = FakeSource()
    analyze = [
        ANALYZE_NEW,
        '{"question_type": "clarification", "should_cache": false, '
        '"canonical_question": "show example code"}',
    ]
    deps, llm = make_deps(
        tmp_path,
        base_script(
            analyze_question=analyze,
            generate_with_history="```python\nwith open(p) as f:\n    ...\n```",
        ),
        [source],
    )
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    await assistant.ask("How do I read a file line by line in Python?", "t1")
    follow = await assistant.ask("그럼 예제 코드도 보여줘", "t1")

    assert follow.question_type == "clarification"
    assert "with open(p)" in follow.answer
    assert len(source.queries) == 1  # no second search
    nodes = nodes_of(follow.steps)
    assert "check_cache" not in nodes and "search_official_docs" not in nodes
    history_call = next(m for task, m in llm.calls if task == "generate_with_history")
    assert ANSWER in str(history_call[-1].content)
    # The follow-up keeps citing the sources of the answer it builds on.
    assert [s["url"] for s in follow.sources] == [d["url"] for d in docs(3)]


async def test_clarification_without_history_becomes_new_topic(tmp_path: Path) -> None:
    analyze = (
        '{"question_type": "clarification", "should_cache": false, '
        '"canonical_question": "show example"}'
    )
    deps, llm = make_deps(tmp_path, base_script(analyze_question=analyze))
    result = await Assistant(deps).ask("Show me an example")
    assert result.question_type == "new_topic"
    assert "generate_with_history" not in llm.tasks()


async def test_multi_answers_and_steps_reset_between_turns(tmp_path: Path) -> None:
    plan = json.dumps({"questions": ["What is JWT?", "What is CORS?"]})
    deps, _llm = make_deps(tmp_path, base_script(create_plan=plan))
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    await assistant.ask("What is JWT? What is CORS?", "thread")
    state = await assistant.graph.aget_state({"configurable": {"thread_id": "thread"}})
    assert len(state.values["multi_answers"]) == 2

    second = await assistant.ask("How do I read a file line by line in Python?", "thread")
    state = await assistant.graph.aget_state({"configurable": {"thread_id": "thread"}})
    assert state.values["multi_answers"] == []
    assert second.plan_case == "single_topic"
    assert "## 1." not in second.answer
    assert not any(s["node"].startswith("Q") for s in second.steps)
    assert nodes_of(second.steps)[:2] == ["route_query", "create_plan"]
    # The thread keeps the whole conversation: two questions, two answers.
    assert len(state.values["messages"]) == 4


@pytest.mark.parametrize("bad", ["", "   \n", "a" * 9000, "hello\x00world"])
async def test_bad_questions_are_rejected_clearly(tmp_path: Path, bad: str) -> None:
    deps, llm = make_deps(tmp_path, {})
    with pytest.raises(InvalidQuestionError):
        await Assistant(deps).ask(bad)
    assert llm.tasks() == []


async def test_stream_emits_steps_then_tokens_then_result(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, base_script())
    events = [e async for e in Assistant(deps).stream("How do I read a file?")]
    kinds = [e.kind for e in events]
    assert kinds[-1] == "result"
    assert kinds.index("step") < kinds.index("token")
    tokens = "".join(e.text for e in events if e.kind == "token")
    assert tokens.strip() == ANSWER
    assert events[-1].result is not None and events[-1].result.answer == ANSWER


@pytest.mark.parametrize(
    ("reply", "case"),
    [
        (
            '{"questions": ["What is a Python decorator?", "How do I write a decorator?"]}',
            "single_topic",
        ),
        ('{"questions": ["What is JWT?", "What is JWT?"]}', "single_topic"),
        ('{"questions": ["What is JWT?"]}', "single_topic"),
        ('{"questions": ["a?", "b?", "c?"]}', "too_many"),
        (
            '{"questions": ["What is JWT?", "How to fix CORS?"]}',
            "multiple_questions",
        ),
    ],
)
async def test_plan_case_follows_the_listed_questions(
    tmp_path: Path, reply: str, case: str
) -> None:
    deps, _ = make_deps(tmp_path, base_script(create_plan=reply))
    result = await Assistant(deps).ask("Explain JWT and also how to fix CORS errors")
    assert result.plan_case == case


async def test_two_questions_keep_the_users_wording(tmp_path: Path) -> None:
    paraphrase = json.dumps({"questions": ["How do I write a JWT?", "How to fix CORS errors?"]})
    deps, _ = make_deps(tmp_path, base_script(create_plan=paraphrase))
    result = await Assistant(deps).ask("JWT가 뭐야? CORS 에러는 어떻게 해결해?")
    assert "## 1. JWT가 뭐야?" in result.answer
    assert "## 2. CORS 에러는 어떻게 해결해?" in result.answer


async def test_stream_reports_each_step_once_with_worker_labels(tmp_path: Path) -> None:
    plan = json.dumps({"questions": ["What is JWT?", "What is CORS?"]})
    deps, _ = make_deps(tmp_path, base_script(create_plan=plan))
    events = [e async for e in Assistant(deps).stream("What is JWT? What is CORS?")]
    streamed = [(e.step["node"], e.step["message"]) for e in events if e.step is not None]
    assert len(streamed) == len(set(streamed)), "a step was streamed twice"
    final = events[-1].result
    assert final is not None
    assert sorted(streamed) == sorted((s["node"], s["message"]) for s in final.steps)
    assert ("Q1/filter_and_score", "kept 3 of 3") in streamed
    assert ("Q2/summarize_results", "summarised 3 results") in streamed


async def test_turn_result_does_not_carry_the_previous_question_type(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, base_script())
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    first = await assistant.ask("How do I read a file line by line in Python?", "t")
    assert first.question_type == "new_topic"
    second = await assistant.ask("JWT? CORS? Docker?", "t")
    assert second.question_type is None


async def test_follow_up_failure_ends_the_turn_with_a_message(tmp_path: Path) -> None:
    def boom(messages: object) -> str:
        raise RuntimeError("model crashed")

    deps, _ = make_deps(tmp_path, base_script(generate_with_history=boom))
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    await assistant.ask("How do I read a file line by line in Python?", "t")
    follow = await assistant.ask("Can you show an example?", "t")
    assert "follow-up failed: RuntimeError: model crashed" in follow.answer
    assert any(s["kind"] == "error" for s in follow.steps)
