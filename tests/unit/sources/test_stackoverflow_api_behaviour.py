"""The Stack Overflow client as the real API needs it, against the loopback stand-in:
guessed tags never lose a post, flags are not exclusions, one `backoff` is honoured by
concurrent searches, and an accepted answer past the first page is found.

Rows are real StackEval posts (Stack Overflow content, CC BY-SA 4.0), cut short.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from codeweaver.sources.base import SourceError
from codeweaver.sources.so_format import guess_tags, plain_words
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver_eval.stackexchange.corpus import Corpus, Reply, load_stackeval
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback
from tests.unit.codeweaver_eval.stackeval import ROWS

LINQ_TITLE = "LINQ to SQL not supported in .net 5.0?"
LINQ = {
    "questionId": "c98480b7d0164a6889b979dc5110cc4f",
    "question": (
        f'{LINQ_TITLE}\nMy project used .NetFramework 4.6.2 with "LINQ to SQL" query from '
        "MSSQL.\n\nRecently, I am going to upgrade the program to .net5.0.\nHowever, I "
        'discover "LINQ to SQL" seems like doesn\'t support to .net5.0.\n'
    ),
    "questionMetadata": {"tag": "c#"},
    "answer": "I have tried to use EFCore and it's work.\n\nJust install "
    "**Microsoft.EntityFrameworkCore** and **Microsoft.EntityFrameworkCore.SqlServer**.\n",
}
GCC_TITLE = (
    "Why does this simple program compiled with gcc,-mfpmath=387, and an optimization "
    "level of -O2 or -O3 produce NaN values?"
)
GCC = {
    "questionId": "ad8ee29ff0994b7ca114eaa780779037",
    "question": (
        f"{GCC_TITLE}\nI have a short program that performs a numerical computation, and "
        "obtains an incorrect NaN result when some specific conditions hold.\n"
    ),
    "questionMetadata": {"tag": "c"},
    "answer": "This is caused by interplay of x87 80-bit internal precision, non-conforming "
    "behavior of GCC, and optimization decisions differing between compiler versions.\n",
}


def _corpus(tmp_path: Path, rows: list[dict[str, Any]]) -> Corpus:
    path = tmp_path / "stack-eval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Corpus(load_stackeval(path))


async def _search(url: str, *questions: str, limit: int = 5) -> list[Any]:
    source = StackOverflowSource(base_url=url)
    try:
        return list(
            await asyncio.gather(*(source.search(q, "debugging", limit) for q in questions))
        )
    finally:
        await source.aclose()


def _found(results: list[Any], question_id: int) -> bool:
    return any(r["reference"].startswith(f"stackoverflow:q{question_id}/") for r in results)


async def test_a_post_whose_real_tag_differs_from_the_guess_is_still_found(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, [LINQ, *ROWS])
    post = corpus.by_hex[LINQ["questionId"]]
    assert post.tags == ("c#",) and not set(guess_tags(LINQ_TITLE)) & set(post.tags)
    loopback = StackExchangeLoopback(corpus)
    with serve_loopback(loopback) as url:
        [results] = await _search(url, LINQ_TITLE)
    assert _found(results, post.question_id)
    searches = [r for r in loopback.requests if r.path == "/search/advanced"]
    # The guessed tags found nothing; the same words untagged found the post, before
    # falling back to /similar.
    assert "tagged" in searches[0].params and searches[0].question_ids == ()
    assert "tagged" not in searches[1].params and post.question_id in searches[1].question_ids
    assert ".net" in searches[1].params["q"].split()
    assert all(r.path != "/similar" for r in loopback.requests)


async def test_a_flag_like_O2_in_the_question_does_not_exclude_its_post(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, [GCC, *ROWS])
    post = corpus.by_hex[GCC["questionId"]]
    loopback = StackExchangeLoopback(corpus)
    with serve_loopback(loopback) as url:
        [results] = await _search(url, GCC["question"])
    assert _found(results, post.question_id)
    sent = [r.params["q"] for r in loopback.requests if r.path == "/search/advanced"]
    assert sent and not any(w.startswith("-") for q in sent for w in q.split())
    assert any(post.question_id in r.question_ids for r in loopback.requests
               if r.path == "/search/advanced")  # fmt: skip


def test_site_operators_in_user_text_are_words() -> None:
    assert plain_words("is:answer score:5 gcc -O2 title:x") == "is answer score 5 gcc O2 title x"
    assert plain_words("std::vector TypeError: x") == "std::vector TypeError: x"


async def test_two_concurrent_searches_honour_one_backoff(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, ROWS)
    titles = [row["question"].split("\n", 1)[0] for row in ROWS[:2]]
    # Every response asks for a 1 s backoff on its method; a call inside it is error 502.
    shared = StackExchangeLoopback(corpus, backoff_every=1, backoff_seconds=1)
    with serve_loopback(shared) as url:
        found = await _search(url, *titles)
    assert shared.limits.violations == 0
    for results, row in zip(found, ROWS[:2], strict=True):
        assert _found(results, corpus.by_hex[row["questionId"]].question_id)

    # The control: two sources, each unaware of the other's backoff, break it.
    apart = StackExchangeLoopback(corpus, backoff_every=1, backoff_seconds=1)
    with serve_loopback(apart) as url:
        sources = [StackOverflowSource(base_url=url) for _ in titles]
        outcomes = await asyncio.gather(
            *(s.search(t, "debugging", 5) for s, t in zip(sources, titles, strict=True)),
            return_exceptions=True,
        )
        for source in sources:
            await source.aclose()
    assert apart.limits.violations >= 1
    assert any(isinstance(o, SourceError) and o.kind == "throttled" for o in outcomes)


async def test_an_accepted_answer_on_the_second_page_is_found(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, ROWS)
    post = corpus.by_hex[ROWS[0]["questionId"]]
    accepted = replace(post.answers[0], score=0)
    owner = accepted.owner
    others = tuple(Reply(50_000 + n, f"<p>another way {n}</p>", 1 + n % 7, post.created + n, owner)
                   for n in range(120))  # fmt: skip
    served = Corpus([replace(post, answers=(*others, accepted)), *corpus.posts[1:]])
    loopback = StackExchangeLoopback(served)
    with serve_loopback(loopback) as url:
        [results] = await _search(url, post.title, limit=1)
    [result] = results
    assert result["reference"] == f"stackoverflow:q{post.question_id}/a{accepted.answer_id}"
    assert result["snippet"].startswith("[accepted")
    pages = [r.params.get("page") for r in loopback.requests if r.path.endswith("/answers")]
    assert pages == ["1", "2"]
