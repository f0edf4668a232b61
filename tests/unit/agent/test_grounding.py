"""The grounding check: claims, citations, the model's verdicts, and the bounded retries."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.answering.grounding import (
    check_grounding,
    lexical_verdict,
    split_claims,
    warning,
)
from codeweaver.agent.runner import Assistant
from codeweaver.llm.scripted import ScriptedChatModel
from tests.fakes import FakeSource, doc, make_deps

SOURCE = doc(
    1,
    text="Use sorted() to get a new sorted list. The list.sort() method sorts in place "
    "and returns None. Both accept a key function and reverse=True.",
)
GROUNDED = "`sorted()` returns a new sorted list [1]. `list.sort()` sorts in place [1]."
INVENTED = "Dictionaries are stored on the GPU by the garbage collector [1]."
# The source's second sentence with a negation added: it says the opposite.
CONTRADICTING = "The `list.sort()` method does not sort in place [1]."


def test_claims_are_prose_sentences_with_their_citations() -> None:
    answer = (
        "## Sorting\n`sorted()` returns a new list [1].\n\n```python\nx = sorted(y)  # [2]\n```\n"
        "- `list.sort()` works in place [1][2].\n- Both take a key function."
    )
    claims = split_claims(answer)
    assert [c.citations for c in claims] == [(1,), (1, 2), ()]
    assert claims[0].plain == "`sorted()` returns a new list."
    assert all("x = sorted" not in c.text for c in claims)  # code is not a claim


def test_words_decide_clear_cases_and_leave_the_rest() -> None:
    supported, invented = split_claims(f"{GROUNDED} {INVENTED}")[0], split_claims(INVENTED)[0]
    verdict = lexical_verdict(supported, [SOURCE])
    assert verdict is not None and verdict.supported
    # Unsupported but not shown wrong: its citation is removed, nothing is rewritten.
    verdict = lexical_verdict(invented, [SOURCE])
    assert verdict is not None and verdict.outcome == "citation removed"
    number = split_claims("`sorted()` takes 3 arguments [1].")[0]
    verdict = lexical_verdict(number, [SOURCE])
    assert verdict is not None and verdict.outcome == "citation removed" and "3" in verdict.reason
    # A source sentence restated with its negation flipped contradicts it.
    negated = split_claims(CONTRADICTING)[0]
    verdict = lexical_verdict(negated, [SOURCE])
    assert verdict is not None and verdict.outcome == "contradiction"
    assert "adds 'not'" in verdict.reason
    kept = split_claims("The `list.sort()` method sorts in place [1].")[0]
    verdict = lexical_verdict(kept, [SOURCE])
    assert verdict is not None and verdict.supported
    # A negation loosely matching the source, or a partial match, needs a reader.
    loose = split_claims("`list.sort()` does not sort the list in place [1].")[0]
    assert lexical_verdict(loose, [SOURCE]) is None
    partial = split_claims("`list.sort()` is faster than building a new list for big data [1].")
    assert lexical_verdict(partial[0], [SOURCE]) is None


def test_numbers_the_asker_gave_may_be_repeated() -> None:
    claim = split_claims("On Python 3.12 `list.sort()` sorts in place [1].")[0]
    verdict = lexical_verdict(claim, [SOURCE])
    assert verdict is not None and not verdict.supported and "3.12" in verdict.reason
    verdict = lexical_verdict(claim, [SOURCE], "How do I sort in Python 3.12?")
    assert verdict is not None and verdict.supported


def test_a_short_claim_is_not_judged_by_words() -> None:
    short = split_claims("Use `sorted()` [1].")[0]
    assert lexical_verdict(short, [SOURCE]) is None


def test_framing_sentences_are_not_claims() -> None:
    framing = (
        "Here's a simple code example [1]: This answer is directly from the cited source [1]. "
        "This information is derived from the official Java documentation [2]."
    )
    assert split_claims(framing) == []
    # A lead-in or an attribution that also states something is still a claim.
    stating = (
        "The `sort()` method returns None, so use `sorted()` instead [1]:\n\n"
        "According to the docs, `os.walk` recurses into folders [1]."
    )
    assert [c.citations for c in split_claims(stating)] == [(1,), (1,)]


async def test_the_model_settles_undecided_claims_in_one_call() -> None:
    llm = ScriptedChatModel(script={"check_answer": '{"unsupported": [2]}'})
    answer = (
        f"{GROUNDED.split(' [1].')[0]} [1]. "
        "`list.sort()` is faster than building a new list for big data [1]."
    )
    report = await check_grounding(llm, "How do I sort a list?", answer, [SOURCE])
    assert llm.tasks() == ["check_answer"]
    # The model's finding removes the citation; only a contradiction sends it back.
    assert [v.claim.index for v in report.removed] == [2]
    assert report.asked_model and report.passed
    judged = str(llm.calls[0][1][-1].content)
    assert '<claim n="2">' in judged and "returns None" in judged  # excerpt of source 1


async def test_unknown_citations_and_a_failing_model_are_reported() -> None:
    broken = ScriptedChatModel(script={"check_answer": "no json here"})
    answer = "`list.sort()` does not return a list [1]. See also [4]."
    report = await check_grounding(broken, "How do I sort?", answer, [SOURCE])
    # A citation naming no source is removed from the answer, not sent back.
    assert report.unknown_citations == [4] and report.passed
    assert report.cleaned(answer, 1) == "`list.sort()` does not return a list [1]. See also."
    assert report.model_problem  # the fallback is recorded, not hidden
    # Without the model's verdict the negated claim is not condemned; [4] names no source.
    assert [(v.claim.index, v.reason) for v in report.unsupported] == [
        (2, "cites no listed source")
    ]


async def test_a_grounded_answer_passes_first_time_and_is_cached(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": GROUNDED},
        [FakeSource(results=[SOURCE])],
    )
    result = await Assistant(deps).ask("How do I sort a list in Python?")
    assert llm.tasks().count("generate_answer") == 1 and "check_answer" not in llm.tasks()
    assert result.answer == GROUNDED
    checks = [s for s in result.steps if s["node"] == "check_answer"]
    assert "2 cited claims supported" in str(checks[0]["message"])
    assert deps.cache.lookup("How do I sort a list in Python?") is not None


async def test_feedback_reaches_the_second_attempt(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path,
        {
            "classify_intent": '{"intent": "learning"}',
            "generate_answer": [CONTRADICTING, GROUNDED],
        },
        [FakeSource(results=[SOURCE])],
    )
    result = await Assistant(deps).ask("How do I sort a list in Python?")
    assert result.answer == GROUNDED
    attempts = [m for task, m in llm.calls if task == "generate_answer"]
    assert len(attempts) == 2
    second = str(attempts[1][-1].content)
    assert "A reviewer checked" in second and "does not sort in place" in second
    assert "A reviewer" not in str(attempts[0][-1].content)


async def test_retries_are_bounded_and_the_best_answer_carries_a_warning(
    tmp_path: Path,
) -> None:
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": CONTRADICTING},
        [FakeSource(results=[SOURCE])],
    )
    result = await Assistant(deps).ask("How do I sort a list in Python?")
    assert llm.tasks().count("generate_answer") == 2  # the first try and the one rewrite
    assert result.answer.startswith(CONTRADICTING)
    assert "**Warning:**" in result.answer and "does not sort in place" in result.answer
    retries = [s for s in result.steps if s["kind"] == "think" and s["node"] == "check_answer"]
    assert len(retries) == 1
    assert deps.cache.lookup("How do I sort a list in Python?") is None  # never cached


async def test_the_check_can_be_turned_off(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": INVENTED},
        [FakeSource(results=[SOURCE])],
        grounding=False,
    )
    result = await Assistant(deps).ask("How do I sort a list in Python?")
    assert result.answer == INVENTED and llm.tasks().count("generate_answer") == 1


def test_warning_speaks_the_answer_language() -> None:
    from codeweaver.agent.answering.grounding import ClaimVerdict, GroundingReport

    claim = split_claims(CONTRADICTING)[0]
    verdict = ClaimVerdict(claim, False, 1.0, "it adds 'not'", contradicts=True)
    report = GroundingReport([verdict], [3])
    assert "주의" in warning(report, "ko") and "does not sort" in warning(report, "ko")
    english = warning(report, "en")
    assert "Warning" in english and "does not sort" in english
    # An unknown citation is removed from the answer, so the warning no longer lists it.
    assert "[3]" not in english


async def test_unchecked_answers_are_cached_failed_ones_never(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": INVENTED},
        [FakeSource(results=[SOURCE])],
        grounding=False,
    )
    await Assistant(deps).ask("How do I sort a list in Python?")
    assert deps.cache.lookup("How do I sort a list in Python?") is not None

    def boom(messages: object) -> str:
        raise RuntimeError("model crashed")

    failing, _ = make_deps(
        tmp_path / "other",
        {"classify_intent": '{"intent": "learning"}', "generate_answer": boom},
        [FakeSource(results=[SOURCE])],
    )
    result = await Assistant(failing).ask("How do I sort a list in Python?")
    assert "could not write an answer" in result.answer
    assert failing.cache.lookup("How do I sort a list in Python?") is None


def test_a_lead_in_is_split_from_the_claim_after_it() -> None:
    claims = split_claims("Follow these steps: The `list.sort()` method sorts in place [1].")
    # The lead-in says too little to be a claim; the sentence after it is checked alone.
    assert [(c.plain, c.citations) for c in claims] == [
        ("The `list.sort()` method sorts in place.", (1,))
    ]
    # A citation after the colon stays with its sentence.
    cited = split_claims("The `list.sort()` method is the dirty approach: [1].")
    assert [c.citations for c in cited] == [(1,)]


def test_adding_a_negation_to_a_negated_sentence_reverses_it_too() -> None:
    source = doc(1, text="The `sort()` method does not return the list. It sorts in place.")
    doubled = split_claims("The `sort()` method does not never return the list [1].")[0]
    verdict = lexical_verdict(doubled, [source])
    assert verdict is not None and verdict.contradicts and "adds 'never'" in verdict.reason
    same = split_claims("The `sort()` method does not return the list [1].")[0]
    verdict = lexical_verdict(same, [source])
    assert verdict is not None and verdict.supported


async def test_undecided_claims_go_to_the_model_only_when_it_is_the_judge(
    tmp_path: Path,
) -> None:
    partial = "`list.sort()` is faster than building a new list for big data [1]."
    script = {
        "classify_intent": '{"intent": "learning"}',
        "generate_answer": partial,
        "check_answer": '{"unsupported": [1], "answers_question": true}',
    }
    for judge, asked in (("words", False), ("model", True)):
        deps, llm = make_deps(
            tmp_path / judge,
            script,
            [FakeSource(results=[SOURCE])],
            grounding_judge=judge,
            grounding_retries=0,
        )
        result = await Assistant(deps).ask("How do I sort a list in Python?")
        assert ("check_answer" in llm.tasks()) is asked
        # The model's finding removes the citation; it is no contradiction to warn about.
        assert ("[1]" in result.answer) is not asked
        assert "**Warning:**" not in result.answer


def test_a_citation_closes_its_sentence_whatever_case_follows() -> None:
    claims = split_claims("`sorted()` returns a new list [1]. numpy arrays sort in place [2].")
    assert [(c.plain, c.citations) for c in claims] == [
        ("`sorted()` returns a new list.", (1,)),
        ("numpy arrays sort in place.", (2,)),
    ]


def test_auxiliaries_do_not_make_an_invented_claim_look_supported() -> None:
    source = doc(1, text="The method was added in version 9 and was kept since.")
    invented = split_claims("This behaviour was removed in the new release [1].")[0]
    verdict = lexical_verdict(invented, [source])
    assert verdict is not None and not verdict.supported
