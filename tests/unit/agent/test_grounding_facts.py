"""The grounding check on reworded claims: a number, version, name or negation changed
from the cited source is a contradiction (one rewrite); a restatement, however reworded
or reformatted, never is.

Hand-made sources show each rule; `stackeval_dev_changed.jsonl` (reworded excerpts of
StackEval accepted answers, CC BY-SA 4.0, and copies with one cited fact changed) holds
the check to the targets on text it was developed with.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeweaver.agent.answering.facts import changed_fact, tokens
from codeweaver.agent.answering.grounding import (
    ClaimVerdict,
    check_grounding,
    lexical_verdict,
    split_claims,
)
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from codeweaver_eval.grounding_eval import evaluate_grounding, load_cases
from tests.fakes import FakeSource, doc, make_deps

SOURCE = doc(
    1,
    text="Dictionaries keep their insertion order since Python 3.7. "
    "Run `pip install --upgrade pip` before you install the package. "
    "A list comprehension is usually faster than three calls to `append()` in a loop. "
    "If the list is empty, the `max()` function raises a `ValueError`. "
    "The `sort()` method does not return the sorted list, it sorts in place. "
    "Compile with `-std=c++17` because structured bindings need C++17. "
    "I looked up TSLint (v1.3.3) in the extensions tab. "
    "An offset is added (not multiplied) to the address register.",
)
QUESTION = "How do I keep a list sorted in Python?"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")


def verdict_of(
    claim: str, source: SearchResult = SOURCE, question: str = QUESTION
) -> ClaimVerdict | None:
    found = split_claims(claim)
    assert len(found) == 1, found
    return lexical_verdict(found[0], [source], question)


# --- a changed fact in a reworded claim contradicts its source ------------------------


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        # number, the source's written as a word ("three")
        (
            "Usually, a list comprehension beats 4 calls to `append()` inside a loop [1].",
            "it says number 4 where the cited source says 3",
        ),
        # version, the clause moved
        (
            "Dictionaries keep their insertion order since Python 3.6, as the docs say [1].",
            "it says version 3.6 where the cited source says 3.7",
        ),
        (
            "Structured bindings need C++14, so compile with `-std=c++17` [1].",
            "it says version 14 where the cited source says 17",
        ),
        # name: a flag, a function, an exception
        (
            "Before you install the package, run `pip install --user pip` [1].",
            "it says '--user' where the cited source says '--upgrade'",
        ),
        (
            "When the list is empty, the `min()` function raises a `ValueError` [1].",
            "it says 'min' where the cited source says 'max'",
        ),
        (
            "If the list is empty, `max()` raises a `KeyError` [1].",
            "it says 'keyerror' where the cited source says 'valueerror'",
        ),
    ],
)
def test_a_changed_fact_contradicts_its_source(claim: str, reason: str) -> None:
    verdict = verdict_of(claim)
    assert verdict is not None and verdict.outcome == "contradiction", verdict
    assert verdict.reason == reason


def test_a_changed_negation_contradicts_its_source() -> None:
    for claim, reason in [
        ("The `sort()` method does return the sorted list, it sorts in place [1].", "drops"),
        ("If the list is empty, the `max()` function does not raise a `ValueError` [1].", "adds"),
        # Reworded and reordered past a word-for-word alignment: the negation's place
        # ("does [not] return") still shows it dropped.
        ("Since it sorts in place, the sort() method does return the sorted list [1].", "drops"),
    ]:
        verdict = verdict_of(claim)
        assert verdict is not None and verdict.outcome == "contradiction", claim
        assert verdict.reason.startswith(f"it {reason} 'not'")


# --- a restatement is never flagged, however reworded --------------------------------


@pytest.mark.parametrize(
    "claim",
    [
        "Dictionaries keep their insertion order since Python 3.7.0 [1].",  # version padded
        "Since python 3.7, **dictionaries** keep their insertion order [1].",  # reordered
        "A list comprehension is usually faster than 3 calls to append() in a loop [1].",
        "In short, run pip install --upgrade pip before you install the package [1].",
        "Before you install the package, run `pip install --upgrade pip` [1].",
        "The sort() method doesn't return the sorted list, it sorts in place [1].",
        "The `max()` function raises a `ValueError` if the list is empty [1].",  # clause moved
        "Compile with -std=c++17, because structured bindings need C++ 17 [1].",
        "I looked up TSLint (version 1.3.3) in the extensions tab [1].",  # v1.3.3
        "An offset is added to the address register [1].",  # an aside with "not" left out
    ],
)
def test_a_reworded_restatement_is_supported(claim: str) -> None:
    verdict = verdict_of(claim)
    assert verdict is None or verdict.supported, verdict


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_a_clause_moved_with_its_negation_is_no_flip() -> None:
    # StackEval line 402: "If it is not, make a call to the `/sanctum/csrf-cookie` route
    # (or whatever …)"; the restatement moves the condition, its "not" with it.
    row = json.loads(STACKEVAL.read_text(encoding="utf-8").splitlines()[401])
    source = doc(1, text=row["answer"])
    claim = "Make a call to the `/sanctum/csrf-cookie` route if it isn't [1]."
    verdict = verdict_of(claim, source, row["question"])
    assert verdict is None or not verdict.contradicts, verdict


def test_facts_are_compared_as_written_any_way() -> None:
    def facts(text: str) -> list[str]:
        return [t.text for t in tokens(text) if t.kind in ("number", "version", "name")]

    assert facts("three calls, Python 3.8.0, v2") == ["3", "3.8", "2"]
    assert facts("`os.path.join()` and --save-dev on C++11") == ["os.path.join", "--save-dev", "11"]
    # A version padded, a count spelled, a flag without its dashes: the same facts.
    source = "Install it with `npm install --save-dev x` on Node 18.0, in two steps."
    for claim in (
        "In two steps, on Node 18, install it with npm install --save-dev x.",
        "Install it on Node 18.0.0 in 2 steps with `npm install --save-dev x`.",
    ):
        assert changed_fact(claim, [source]) is None, claim


def test_a_fact_without_a_counterpart_is_no_contradiction() -> None:
    # The source says nothing of `indent`: the citation may go, nothing is rewritten.
    verdict = verdict_of("The `sort()` method accepts an `indent` argument [1].")
    assert verdict is None or not verdict.contradicts


def test_the_askers_own_name_applies_the_source() -> None:
    source = doc(1, text="Call `items.sort()` to sort the list in place.")
    claim = "Call `records.sort()` to sort the list in place [1]."
    asked = "How do I sort my `records` list?"
    verdict = verdict_of(claim, source, asked)
    assert verdict is None or not verdict.contradicts
    # The same sentence with a name the asker did not give is a swap.
    verdict = verdict_of("Call `entries.sort()` to sort the list in place [1].", source, asked)
    assert verdict is not None and verdict.contradicts


def test_a_lead_in_stands_under_the_citation_after_it() -> None:
    # The changed fact sits before the colon, the citation after it.
    claim = "Compile with `-std=c++14` because structured bindings need C++17: see below [1]."
    claims = split_claims(claim)
    assert [(c.citations, c.lead_in) for c in claims] == [((1,), True), ((1,), False)]
    verdict = lexical_verdict(claims[0], [SOURCE], QUESTION)
    assert verdict is not None and verdict.contradicts and "14" in verdict.reason


async def test_a_lead_in_only_counts_when_it_contradicts() -> None:
    fine = "Dictionaries keep their insertion order since Python 3.7: use them as they are [1]."
    report = await check_grounding(None, QUESTION, fine, [SOURCE])
    assert report.passed and not report.removed
    assert not any(v.claim.lead_in for v in report.verdicts)


# --- one rewrite for a contradiction, with the reason ---------------------------------


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        (
            "Dictionaries keep their insertion order since Python 3.6 [1].",
            "it says version 3.6 where the cited source says 3.7",
        ),
        (
            "Before you install the package, run `pip install --user pip` [1].",
            "it says '--user' where the cited source says '--upgrade'",
        ),
    ],
)
async def test_a_changed_version_or_flag_is_rewritten_once(
    tmp_path: Path, draft: str, reason: str
) -> None:
    fixed = "Dictionaries keep their insertion order since Python 3.7 [1]."
    deps, llm = make_deps(
        tmp_path,
        {"classify_intent": '{"intent": "learning"}', "generate_answer": [draft, fixed]},
        [FakeSource(results=[SOURCE])],
    )
    result = await Assistant(deps).ask(QUESTION)
    attempts = [m for task, m in llm.calls if task == "generate_answer"]
    assert len(attempts) == 2  # the draft and the one rewrite
    assert reason in str(attempts[1][-1].content)
    assert result.answer == fixed and "**Warning:**" not in result.answer


# --- the development set: reworded excerpts, and copies with one fact changed ---------

DEV_SET = Path(__file__).parents[2] / "fixtures" / "grounding" / "stackeval_dev_changed.jsonl"


async def test_the_development_set_meets_the_targets() -> None:
    cases = load_cases(DEV_SET)
    assert len(cases) == 120
    report = (await evaluate_grounding(cases, None)).to_dict()
    # Precision first: no reworded restatement is flagged or loses a citation.
    assert report["flag_rate_supported"] == 0.0 and report["removed_rate_supported"] == 0.0
    for kind in ("number changed", "version changed", "name changed", "negation changed"):
        assert report["by_kind"][kind]["rate"] >= 0.9, (kind, report["examples"])
    assert report["model_calls_per_answer"] == 0.0
