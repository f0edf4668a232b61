"""The loopback Stack Exchange API behaves as the real one is documented to: real tags,
site operators, throttles and `backoff`, several answers with paging, competition."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from codeweaver_eval.stackexchange.corpus import (
    Corpus,
    Reply,
    build_post,
    make_post,
    question_id_of,
)
from codeweaver_eval.stackexchange.distractors import (
    QUESTION_ID_BASE,
    load_distractors,
)
from codeweaver_eval.stackexchange.limits import Limits
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback
from codeweaver_eval.stackexchange.query import Query
from tests.unit.codeweaver_eval.stackeval import RUST_BINARY

SHARED = Path("/work/shared/data")
RUST_TITLE = "How do I print an integer in binary with leading zeros?"


def _get(base_url: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(base_url + path, params={"site": "stackoverflow", **params})


def _ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["question_id"] for item in response.json()["items"]]


def test_a_post_carries_the_tags_of_its_data_never_guessed_ones() -> None:
    # A real StackEval title naming pandas; StackEval tags it `python` only.
    post = make_post("f" * 32, "Pandas groupby with NaN values\nbody", "answer", "python")
    assert post.tags == ("python",)
    assert make_post("e" * 32, "t\nb", "a", "bash/shell").tags == ("bash", "shell")


def test_site_operators_are_read_as_the_help_center_documents() -> None:
    query = Query.parse('title:binary body:"leading zeros" score:2.. answers:1 -[python] rust')
    assert query.title_terms == ("binary",) and query.body_terms == ("leading", "zeros")
    assert query.score == (2, None) and query.answers == (1, None)
    assert query.excluded_tags == ("python",) and query.terms == ("rust",)
    assert Query.parse("score:..3").score == (None, 3)
    assert Query.parse("is:answer print").answers_only
    # An operator the stand-in has no data for is read, not required as a word.
    assert Query.parse("user:123 created:2020 zeros").terms == ("zeros",)


def test_operators_select_posts(corpus: Corpus) -> None:
    rust = corpus.by_id[question_id_of(RUST_BINARY)]

    def found(q: str) -> bool:
        return Query.parse(q).matches(rust)

    assert found("title:binary") and not found("title:u16")  # u16 is in the body only
    assert found("body:u16") and found("hasaccepted:yes") and not found("hasaccepted:no")
    assert found(f"score:{rust.question_score}") and not found(f"score:{rust.question_score + 1}")
    assert found("answers:1") and not found("answers:2")
    assert not found("is:answer binary")  # `/search/advanced` lists questions
    assert found("[rust] binary") and not found("-[rust] binary")


def test_several_answers_are_paged_across_the_questions_asked(corpus: Corpus) -> None:
    rust = corpus.by_id[question_id_of(RUST_BINARY)]
    owner = rust.answers[0].owner
    extra = tuple(Reply(9_000 + n, f"<p>answer {n}</p>", 10 + n, rust.created + n, owner)
                  for n in range(5))  # fmt: skip
    many = replace(rust, answers=(*rust.answers, *extra))
    served = Corpus([many, *(p for p in corpus.posts if p is not rust)])
    with serve_loopback(StackExchangeLoopback(served)) as url:
        path = f"/questions/{rust.question_id}/answers"
        first = _get(url, path, sort="votes", pagesize=3).json()
        second = _get(url, path, sort="votes", pagesize=3, page=2).json()
        question = _get(url, f"/questions/{rust.question_id}").json()["items"][0]
    assert [a["score"] for a in first["items"]] == [14, 13, 12] and first["has_more"] is True
    assert second["has_more"] is False and len(second["items"]) == 3
    accepted = [a for a in second["items"] if a["is_accepted"]]
    assert [a["answer_id"] for a in accepted] == [rust.answer_id]
    assert question["answer_count"] == 6 and question["accepted_answer_id"] == rust.answer_id


def test_a_post_without_an_accepted_answer_has_no_accepted_answer_id() -> None:
    post = build_post("k", 5, "A title", "", ("python",), [(6, "x", False)])
    corpus = Corpus([post])
    with serve_loopback(StackExchangeLoopback(corpus)) as url:
        [item] = _get(url, "/questions/5").json()["items"]
    assert "accepted_answer_id" not in item and item["answer_count"] == 1


def test_backoff_is_sent_and_a_call_inside_it_is_a_throttle_violation(corpus: Corpus) -> None:
    loopback = StackExchangeLoopback(corpus, backoff_every=1, backoff_seconds=30)
    with serve_loopback(loopback) as url:
        first = _get(url, "/search/advanced", q="binary")
        other = _get(url, "/similar", title=RUST_TITLE)  # another method: allowed
        again = _get(url, "/search/advanced", q="binary")
    assert first.json()["backoff"] == 30 and other.status_code == 200
    assert again.status_code == 400
    body = again.json()
    assert (body["error_id"], body["error_name"]) == (502, "throttle_violation")
    assert "more requests available in" in body["error_message"]
    assert loopback.limits.violations == 1


def test_more_than_thirty_requests_a_second_are_throttled() -> None:
    now = [100.0]
    limits = Limits(quota_max=1_000, clock=lambda: now[0])
    for _ in range(30):
        limits.admit("search/advanced")
    with pytest.raises(Exception, match="too many requests"):
        limits.admit("questions")
    now[0] += 1.0  # a second later the window is empty again
    assert limits.admit("questions") == 1_000 - 31


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared data not present")
def test_distractors_bring_the_served_posts_past_ten_thousand_with_unique_ids() -> None:
    distractors = load_distractors(SHARED)
    corpus = Corpus.load(SHARED / "intent/stackeval/stack-eval.jsonl", distractors.posts)
    assert len(corpus.posts) >= 10_000
    assert set(distractors.counts) == {
        "askubuntu", "conala", "conala-rewrites", "cs1qa", "chat-langchain",
    }  # fmt: skip
    assert min(p.question_id for p in distractors.posts) > QUESTION_ID_BASE
    assert all(p.answers and not p.has_accepted for p in distractors.posts)
    # A CoNaLa question keeps its several snippets as several answers.
    assert max(p.answer_count for p in distractors.posts) > 1
    # Competition: a title query now returns more than its own post.
    rust = corpus.by_id[question_id_of(RUST_BINARY)]
    assert corpus.similar(rust.title)[0] is rust and len(corpus.similar(rust.title)) > 1


def test_distractor_sets_that_are_missing_fail_clearly(tmp_path: Path) -> None:
    from codeweaver_eval.datasets import DatasetError

    with pytest.raises(DatasetError, match="askubuntu"):
        load_distractors(tmp_path)
