"""The grounding rules on real StackEval answers (CC BY-SA 4.0, ProsusAI/stack-eval).

Cases come from the two labelled sets in tests/fixtures/grounding: `stackeval50.jsonl`
(answers the local model wrote, and copies with a false claim) and
`stackeval_heldout.jsonl` (excerpts of the accepted answer, and copies with one cited
sentence made to contradict it). Lines are cited as "set line N".
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from codeweaver.agent.answering.grounding import check_grounding, lexical_verdict, split_claims
from codeweaver.agent.answering.restatement import align, best_alignment
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from codeweaver.words.markers import cited_numbers
from codeweaver_eval.grounding_eval import GroundingCase, load_cases
from tests.fakes import FakeSource, doc, make_deps

FIXTURES = Path(__file__).parents[2] / "fixtures" / "grounding"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")


@cache
def _cases(name: str) -> dict[int, GroundingCase]:
    return {case.line: case for case in load_cases(FIXTURES / name)}


def case(name: str, line: int) -> GroundingCase:
    return _cases(name)[line]


def heldout(line: int) -> GroundingCase:
    return case("stackeval_heldout.jsonl", line)


def fifty(line: int) -> GroundingCase:
    return case("stackeval50.jsonl", line)


async def check(c: GroundingCase):  # type: ignore[no-untyped-def]
    return await check_grounding(None, c.question, c.answer, c.sources)


# --- a restated source sentence is never flagged -------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        1,  # verbatim, case changed
        3,  # Markdown stripped, code span unwrapped
        7,  # punctuation changed
        9,  # lead-in added ("In short,"), case changed
        29,  # verbatim, Markdown stripped, code span unwrapped, lead-in added
    ],
)
async def test_restated_source_sentences_are_supported(line: int) -> None:
    report = await check(heldout(line))  # held-out set line `line`
    assert report.verdicts and report.passed
    assert [v.reason for v in report.verdicts] == ["it restates the cited source"] * len(
        report.verdicts
    )
    assert not report.removed and not report.contradictions


def test_each_near_verbatim_edit_still_restates() -> None:
    # Held-out line 67 cites StackEval's accepted answer on shadow DOM events.
    source = heldout(67).sources[0]["snippet"]
    sentence = "That's also why inner events are retargeted in order to expose the Shadow DOM host."
    assert sentence in source
    for claim in (
        "That's also why inner events are retargeted in order to expose the shadow dom host.",
        "In short, that is also why inner events are retargeted to expose the Shadow DOM host!",
        "that's also why **inner events** are retargeted, in order to expose the `Shadow DOM` host",
    ):
        found = best_alignment(claim, source)
        assert found is not None and found.restates, claim


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_a_removed_link_still_restates() -> None:
    # StackEval line 746: the accepted answer links a tag page inside its sentence.
    row = json.loads(STACKEVAL.read_text(encoding="utf-8").splitlines()[745])
    assert "](/questions/tagged/c%2b%2b17" in row["answer"]
    claim = 'In pre-c++17 compilers, use <string> and ""s instead of <string_view> and ""sv.'
    found = best_alignment(claim, row["answer"])
    assert found is not None and found.restates


def test_a_number_in_a_lead_in_is_not_waved_through() -> None:
    # Held-out line 65 restates its source; a version the source lacks is no lead-in.
    source = heldout(65).sources[0]["snippet"]
    claim = split_claims(heldout(65).answer)[0]
    assert lexical_verdict(claim, heldout(65).sources).supported  # type: ignore[union-attr]
    added = align(f"On version 9.1 {claim.plain}", source)
    assert not added.restates


# --- an uncited sentence is general knowledge, not a claim ---------------------------


async def test_uncited_sentences_are_not_claims() -> None:
    # Held-out line 67: two sentences about Go installations (from another question's
    # answer) sit uncited between the cited excerpts about shadow DOM.
    c = heldout(67)
    uncited = [claim for claim in split_claims(c.answer) if not claim.citations]
    assert any("Go" in claim.plain for claim in uncited)
    report = await check(c)
    assert all("Go " not in v.claim.plain for v in report.verdicts)
    assert report.passed and not report.removed
    # Its `event.path[0]` is code, not a citation of a source 0.
    assert report.unknown_citations == [] and 0 not in cited_numbers(c.answer)


# --- a citation its source does not support is removed, the sentence stays ----------


async def test_an_unsupported_citation_is_removed_and_the_sentence_kept() -> None:
    # stackeval50 line 2: a sentence of another question's answer, cited [1].
    c = fifty(2)
    report = await check(c)
    assert report.passed  # nothing contradicts the source: no rewrite, no warning
    assert [v.claim.plain for v in report.removed] == [
        "I just noticed that this issue was fixed in Android Studio 3.5!."
    ]
    cleaned = report.cleaned(c.answer, len(c.sources))
    assert "fixed in Android Studio 3.5!." in cleaned and "3.5! [1]" not in cleaned
    assert cleaned.replace("3.5!.", "3.5! [1].") == c.answer  # nothing else changed


async def test_the_node_removes_the_citation_without_a_rewrite(tmp_path: Path) -> None:
    # stackeval50 line 34: the model's answer plus a foreign sentence cited [1].
    c = fifty(34)
    source: SearchResult = {**doc(1), "snippet": c.sources[0]["snippet"]}
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": c.answer},
        [FakeSource(results=[source])],
    )
    result = await Assistant(deps).ask(c.question.splitlines()[0])
    assert llm.tasks().count("generate_answer") == 1
    assert "The output buffer is the third parameter to `str_replace()`." in result.answer
    assert "`str_replace()` [1]" not in result.answer
    assert "**Warning:**" not in result.answer
    removed = [s["message"] for s in result.steps if "removed citation" in str(s["message"])]
    assert removed and "its subject is not in the cited source" in str(removed[0])


# --- a contradiction: one rewrite, then a warning ------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (2, "it adds 'not'"),  # negation inserted
        (6, "it drops 'not'"),  # negation removed ("don't have" → "do have")
        (8, "it says number 6 where the cited source says 5"),
        (38, "it says version 3.4 where the cited source says 3.3"),
        (12, "it says 'dependencies' where the cited source says 'vendor'"),  # name swapped
    ],
)
async def test_a_changed_restatement_contradicts(line: int, reason: str) -> None:
    c = heldout(line)  # held-out set line `line`
    report = await check(c)
    assert [v.claim.text for v in report.contradictions] == [c.false_claim]
    assert reason in report.contradictions[0].reason
    assert not report.passed and c.false_claim.split(" [1]")[0][:40] in report.feedback()


async def test_negating_a_model_answer_sentence_contradicts() -> None:
    # stackeval50 line 88: a source sentence with its verb negated ("can not do it").
    report = await check(fifty(88))
    assert [v.claim.plain for v in report.contradictions] == [
        "Actually, the util-linux 'column' command can not do it."
    ]


async def test_a_contradiction_is_rewritten_once_then_warned(tmp_path: Path) -> None:
    c = heldout(2)  # held-out line 2: "One way is not prefixing all sources with `startWith`"
    source: SearchResult = {**doc(1), "snippet": c.sources[0]["snippet"]}
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": c.answer},
        [FakeSource(results=[source])],
    )
    result = await Assistant(deps).ask("How do I use combineLatest with startWith?")
    assert llm.tasks().count("generate_answer") == 2  # the draft and one rewrite
    rewrite = [s for s in result.steps if s["kind"] == "think" and s["node"] == "check_answer"]
    assert len(rewrite) == 1 and "it adds 'not'" in str(rewrite[0]["message"])
    assert "**Warning:**" in result.answer and "not prefixing" in result.answer
    assert deps.cache.lookup("How do I use combineLatest with startWith?") is None


async def test_a_rewrite_that_fixes_the_contradiction_ends_without_warning(
    tmp_path: Path,
) -> None:
    wrong, right = heldout(8), heldout(7)  # held-out lines 8 and 7: the same answer
    source: SearchResult = {**doc(1), "snippet": right.sources[0]["snippet"]}
    deps, llm = make_deps(
        tmp_path,
        {
            "classify_intent": '{"intent": "learning"}',
            "generate_answer": [wrong.answer, right.answer],
        },
        [FakeSource(results=[source])],
    )
    result = await Assistant(deps).ask("Why does Foo() + 5 not use the instance attribute?")
    second = [m for task, m in llm.calls if task == "generate_answer"][1]
    assert "says number 6 where the cited source says 5" in str(second[-1].content)
    assert result.answer == right.answer and "**Warning:**" not in result.answer


def test_a_phrase_in_place_of_the_sources_code_is_not_a_name_swap() -> None:
    # A real StackEval answer (ssh config alias): the model's prose paraphrase stood where
    # the source had `ssh -G …` code; read as a name swap, it put a false warning on a
    # correct answer.
    source = (
        "Consider instead using the 'ssh -G', which will dump the parameters of an ssh "
        "session, then extract the hostname attribute\n\n"
        "```\nssh -G myAlias | awk '$1 == \"hostname\" { print $2 }'\n```"
    )
    claim = "This command will output the hostname associated with the alias `myAlias` [1]."
    found = best_alignment(claim, source)
    assert found is None or not found.contradicts


def test_a_name_for_a_name_is_still_a_swap() -> None:
    source = "The type passed to your context is actually an array: `[movies, setMovies]`."
    claim = "The type passed to your context is actually an array: [movies, IMovieProviderProps]."
    found = align(claim, source)
    assert found.contradicts and "imovieproviderprops" in (found.conflict or "")
