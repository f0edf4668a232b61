"""The loopback Stack Exchange API: documented shapes, strict search, quota, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from codeweaver.sources.so_format import html_to_markdown
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver_eval.stackexchange.corpus import (
    Corpus,
    CorpusError,
    Query,
    answer_id_of,
    escape_title,
    question_id_of,
    slug,
)
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback
from tests.unit.codeweaver_eval.stackeval import (
    C_ATOI,
    NEXT_PORT,
    PYTHON_RANGE,
    ROWS,
    RUST_BINARY,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "stackexchange"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")
RUST_TITLE = "How do I print an integer in binary with leading zeros?"


def _fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def _keys(items: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """Every key the items use, and every key of their owners."""
    keys = {k for item in items for k in item}
    owners = {k for item in items for k in item.get("owner", {})}
    return keys, owners


def _get(base_url: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(base_url + path, params={"site": "stackoverflow", **params})


def _ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["question_id"] for item in response.json()["items"]]


def test_responses_use_only_the_keys_of_the_recorded_api(base_url: str) -> None:
    recorded_questions = _fixture("search_advanced.json")
    recorded_answers = _fixture("answers.json")
    search = _get(base_url, "/search/advanced", q="leading zeros", filter="withbody").json()
    qid = question_id_of(RUST_BINARY)
    answers = _get(base_url, f"/questions/{qid}/answers", filter="withbody").json()

    assert set(search) == set(recorded_questions) == set(answers)
    question_keys, question_owner = _keys(search["items"])
    known_keys, known_owner = _keys(recorded_questions["items"])
    assert question_keys <= known_keys and question_owner <= known_owner
    assert {"question_id", "title", "link", "tags", "accepted_answer_id", "body"} <= question_keys
    answer_keys, answer_owner = _keys(answers["items"])
    known_keys, known_owner = _keys(recorded_answers["items"])
    assert answer_keys <= known_keys and answer_owner <= known_owner
    assert {"answer_id", "question_id", "is_accepted", "body", "content_license"} <= answer_keys
    assert "backoff" not in search


def test_responses_use_only_keys_of_the_documented_types(base_url: str) -> None:
    qid = question_id_of(RUST_BINARY)
    for name, path in (("question", f"/questions/{qid}"), ("answer", f"/questions/{qid}/answers")):
        documented = _fixture(f"documented/{name}.json")
        served = _get(base_url, path, filter="withbody").json()
        assert set(served) <= set(documented)
        keys, owner = _keys(served["items"])
        known_keys, known_owner = _keys(documented["items"])
        assert keys - known_keys == set() and owner - known_owner == set()


def test_a_question_and_its_accepted_answer_carry_the_values_of_the_row(base_url: str) -> None:
    qid, aid = question_id_of(RUST_BINARY), answer_id_of(RUST_BINARY)
    assert qid == int("032f298", 16) + 1_000_000 and aid != qid
    [question] = _get(base_url, f"/questions/{qid}", filter="withbody").json()["items"]
    assert question["title"] == RUST_TITLE
    assert question["link"] == (
        f"https://stackoverflow.com/questions/{qid}/"
        "how-do-i-print-an-integer-in-binary-with-leading-zeros"
    )
    assert question["tags"] == ["rust"] and question["accepted_answer_id"] == aid
    assert question["is_answered"] is True and question["answer_count"] == 1
    assert 0 <= question["score"] <= 3 and question["content_license"] == "CC BY-SA 4.0"
    assert 1514764800 <= question["creation_date"] < 1696118400  # 2018 – September 2023
    assert question["owner"]["user_type"] == "registered"
    assert question["owner"]["link"].startswith("https://stackoverflow.com/users/")
    # Code fences become <pre><code>, as on Stack Overflow.
    assert "<pre><code>let flags = 0b0000000000101100u16;" in question["body"]
    [answer] = _get(base_url, f"/questions/{qid}/answers", filter="withbody").json()["items"]
    assert answer["answer_id"] == aid and answer["question_id"] == qid
    assert answer["is_accepted"] is True and 1 <= answer["score"] <= 3
    assert answer["creation_date"] > question["creation_date"]
    assert 'println!("{:08b}", 1i8);' in html_to_markdown(answer["body"])
    # Without filter=withbody there is no body.
    [plain] = _get(base_url, f"/questions/{qid}").json()["items"]
    assert "body" not in plain


def test_titles_are_escaped_and_slugged_as_the_api_does() -> None:
    assert escape_title('Don\'t use <b> & "x"') == "Don&#39;t use &lt;b&gt; &amp; &quot;x&quot;"
    assert (
        slug("implicit declaration of function ‘atoi’?") == "implicit-declaration-of-function-atoi"
    )


def test_a_long_natural_language_q_finds_nothing_and_the_titles_core_words_find_the_post(
    base_url: str,
) -> None:
    asked = (
        "I am writing Rust and want to know how I can print an integer as binary so that "
        "the output keeps all of the leading zeros"
    )
    assert _ids(_get(base_url, "/search/advanced", q=asked, sort="relevance")) == []
    core = "print integer binary leading zeros"
    found = _ids(_get(base_url, "/search/advanced", q=core, sort="relevance"))
    assert found == [question_id_of(RUST_BINARY)]
    # The title itself works too: its stopwords are not required.
    title = _ids(_get(base_url, "/search/advanced", q=RUST_TITLE, sort="relevance"))
    assert title == [question_id_of(RUST_BINARY)]


def test_a_quoted_phrase_must_appear_verbatim(base_url: str) -> None:
    atoi = question_id_of(C_ATOI)
    assert _ids(_get(base_url, "/search/advanced", q='"implicit declaration of function"')) == [
        atoi
    ]
    assert _ids(_get(base_url, "/search/advanced", q='"declaration implicit of function"')) == []
    assert _ids(_get(base_url, "/search/advanced", q="declaration implicit function")) == [atoi]
    # A phrase spanning inline code matches the rendered text.
    assert _ids(_get(base_url, "/search/advanced", q='"using the atoi() function"')) == [atoi]


def test_tagged_means_any_of_the_tags(base_url: str) -> None:
    python = question_id_of(PYTHON_RANGE)
    assert _ids(_get(base_url, "/search/advanced", q="range list", tagged="python")) == [python]
    assert _ids(_get(base_url, "/search/advanced", q="range list", tagged="rust")) == []
    assert _ids(_get(base_url, "/search/advanced", q="range list", tagged="rust;python")) == [
        python
    ]


def test_relevance_ranks_title_matches_first_and_pages_are_cut(base_url: str) -> None:
    page = _get(base_url, "/search/advanced", q="print", sort="relevance", pagesize=1).json()
    assert [i["question_id"] for i in page["items"]] == [question_id_of(RUST_BINARY)]
    assert page["has_more"] is True  # the atoi and range posts print too
    second = _ids(
        _get(base_url, "/search/advanced", q="print", sort="relevance", page=2, pagesize=1)
    )
    assert len(second) == 1 and second != [question_id_of(RUST_BINARY)]


def test_search_takes_a_title_substring_and_the_answers_minimum(base_url: str) -> None:
    assert _ids(_get(base_url, "/search/advanced", title="port in next")) == [
        question_id_of(NEXT_PORT)
    ]
    assert _ids(_get(base_url, "/search/advanced", q="port", answers=1)) == [
        question_id_of(NEXT_PORT)
    ]
    assert _ids(_get(base_url, "/search/advanced", q="port", answers=2)) == []


def test_similar_ranks_the_origin_first_for_its_exact_title(base_url: str) -> None:
    for row in ROWS:
        title = row["question"].split("\n", 1)[0]
        found = _ids(_get(base_url, "/similar", title=title, sort="relevance"))
        assert found[0] == question_id_of(row["questionId"])
    # Two shared words relate titles; one ("zeros") does not, nor none.
    two = _ids(_get(base_url, "/similar", title="binary zeros", sort="relevance"))
    assert set(two) >= {question_id_of(RUST_BINARY)}
    one = _ids(_get(base_url, "/similar", title="number of zeros", sort="relevance"))
    assert question_id_of(RUST_BINARY) not in one
    assert _ids(_get(base_url, "/similar", title="kubernetes ingress", sort="relevance")) == []


def test_similar_prefers_tagged_posts_but_never_drops_the_others(base_url: str) -> None:
    title = "print integer binary leading zeros"
    untagged = _ids(_get(base_url, "/similar", title=title, sort="relevance"))
    # A tag the origin lacks: the origin is still listed (preference, not filter).
    tagged = _ids(_get(base_url, "/similar", title=title, tagged="python", sort="relevance"))
    assert question_id_of(RUST_BINARY) in untagged and set(untagged) == set(tagged)


def test_similar_needs_a_title(base_url: str) -> None:
    response = _get(base_url, "/similar", tagged="python")
    assert response.status_code == 400
    assert response.json() == {
        "error_id": 400,
        "error_message": "title",
        "error_name": "bad_parameter",
    }


def test_the_quota_decrements_and_is_never_negative(corpus: Corpus) -> None:
    loopback = StackExchangeLoopback(corpus, quota_max=2)
    with serve_loopback(loopback) as url:
        first = _get(url, "/search/advanced", q="print").json()
        second = _get(url, "/search/advanced", q="print").json()
        third = _get(url, "/search/advanced", q="print")
    assert (first["quota_max"], first["quota_remaining"], second["quota_remaining"]) == (2, 1, 0)
    assert third.status_code == 400
    assert third.json()["error_id"] == 502 and third.json()["error_name"] == "throttle_violation"
    assert loopback.quota_remaining == 0


def test_a_missing_site_is_the_documented_error(base_url: str) -> None:
    response = httpx.get(base_url + "/search/advanced", params={"q": "print"})
    assert response.status_code == 400
    body = response.json()
    assert set(body) == set(_fixture("bad_parameter.json"))
    assert (body["error_id"], body["error_name"]) == (400, "bad_parameter")
    too_big = _get(base_url, "/search/advanced", q="print", pagesize=101)
    assert too_big.status_code == 400 and too_big.json()["error_message"] == "pagesize"
    many = ";".join(str(i) for i in range(1, 102))
    assert _get(base_url, f"/questions/{many}/answers").json()["error_message"] == "ids"


def test_every_request_is_logged_with_its_parameters(
    base_url: str, loopback: StackExchangeLoopback
) -> None:
    _get(base_url, "/search/advanced", q="print integer binary")
    _get(base_url, "/similar", title=RUST_TITLE)
    httpx.get(base_url + "/search/advanced")
    logged = loopback.requests
    assert [r.path for r in logged] == ["/search/advanced", "/similar", "/search/advanced"]
    assert [r.status for r in logged] == [200, 200, 400]
    assert [r.query_chars for r in logged] == [20, len(RUST_TITLE), 0]
    assert logged[0].question_ids == (question_id_of(RUST_BINARY),)


def test_q_parsing_separates_terms_phrases_and_tags() -> None:
    query = Query.parse('How to fix "No module named foo" in [python] with arr[10]')
    assert query.phrases == ("no module named foo",)
    assert query.tags == ("python",)
    assert query.terms == ("fix", "arr", "10")


def test_colliding_post_ids_fail_loudly(tmp_path: Path) -> None:
    twin = {**ROWS[1], "questionId": ROWS[0]["questionId"][:7] + "0" * 25}
    path = tmp_path / "twins.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps(twin) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="not unique"):
        Corpus.load(path)


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_the_whole_stackeval_gets_unique_ids_and_each_title_finds_its_post() -> None:
    corpus = Corpus.load(STACKEVAL)
    assert len(corpus.posts) == 925 == len(corpus.by_id) == len(corpus.by_answer_id)
    found = sum(1 for post in corpus.posts if corpus.similar(post.title)[:1] == [post])
    assert found >= 920


async def test_the_stack_overflow_source_finds_the_accepted_answer_of_a_title(
    base_url: str, loopback: StackExchangeLoopback
) -> None:
    source = StackOverflowSource(base_url=base_url)
    try:
        results = await source.search(RUST_TITLE, "learning", 5)
    finally:
        await source.aclose()
    qid, aid = question_id_of(RUST_BINARY), answer_id_of(RUST_BINARY)
    assert results[0]["reference"] == f"stackoverflow:q{qid}/a{aid}"
    assert results[0]["url"].startswith(f"https://stackoverflow.com/questions/{qid}/")
    assert results[0]["title"] == RUST_TITLE
    assert 'println!("{:08b}", 1i8);' in results[0]["snippet"]
    assert "accepted" in results[0]["snippet"]
    assert results[0]["attribution"] and "CC BY-SA 4.0" in results[0]["attribution"]
    assert loopback.requests[0].path == "/search/advanced"
    assert loopback.requests[-1].path == f"/questions/{qid}/answers"
    assert all(r.query_chars <= 150 for r in loopback.requests)


def test_a_dash_that_starts_a_word_excludes_it_as_the_site_search_does() -> None:
    query = Query.parse('gcc -O2 -march "keep -this" [c]')
    assert query.excluded == ("o2", "march") and query.terms == ("gcc",)
    assert query.phrases == ("keep -this",) and query.tags == ("c",)


# A real StackEval row whose title holds a command-line flag.
PIPEFAIL_ROW: dict[str, Any] = {
    "questionId": "f23ca6782c7b477487654fb1690bd15d",
    "question": (
        "Linux/Ubuntu set: Illegal option -o pipefail\n"
        "I have this script which is giving me an error:\n\n```\nset -o pipefail\n```\n"
    ),
    "questionMetadata": {"tag": "bash/shell"},
    "answer": "You are probably running the script with `sh`, not `bash`: run `bash x.sh`.",
}


async def test_a_flag_in_the_question_does_not_exclude_its_post(tmp_path: Path) -> None:
    path = tmp_path / "stack-eval.jsonl"
    path.write_text(json.dumps(PIPEFAIL_ROW) + "\n", encoding="utf-8")
    corpus = Corpus.load(path)
    (post,) = corpus.posts
    # Sent as written, the flag is an exclusion: the stand-in finds nothing by it.
    assert not [p for p in corpus.posts if Query.parse("Illegal option -o pipefail").matches(p)]
    loopback = StackExchangeLoopback(corpus)
    with serve_loopback(loopback) as url:
        source = StackOverflowSource(base_url=url)
        try:
            results = await source.search(
                "Linux/Ubuntu set: Illegal option -o pipefail", "debugging", 5
            )
        finally:
            await source.aclose()
    searches = [r for r in loopback.requests if r.path == "/search/advanced"]
    assert [r.path for r in loopback.requests][: len(searches)] == ["/search/advanced"] * len(
        searches
    )
    for search in searches:
        assert not any(word.startswith("-") for word in search.params["q"].split()), search
    assert searches[-1].question_ids == (post.question_id,)  # found by the search
    assert results and results[0]["url"].startswith(
        f"https://stackoverflow.com/questions/{post.question_id}/"
    )
