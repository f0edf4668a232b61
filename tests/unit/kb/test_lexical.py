"""The knowledge base's lexical side: tokens of identifiers and Korean, BM25, the cache."""

from __future__ import annotations

import threading

import pytest

from codeweaver.kb.lexical import LexicalCache, LexicalIndex, tokenize


def test_identifiers_are_kept_whole_and_split() -> None:
    tokens = tokenize("Call user.get_name() with CW_DEPLOY_TOKEN set")
    assert tokens[1:5] == ["user.get_name", "user", "get", "name"]
    assert {"cw_deploy_token", "cw", "deploy", "token"} <= set(tokens)


def test_camel_case_and_plurals() -> None:
    tokens = tokenize("parseHeader returns Tokens")
    assert {"parseheader", "parse", "header", "token"} <= set(tokens)
    assert "tokens" not in tokens


def test_stopwords_dropped_but_kept_inside_identifiers() -> None:
    assert tokenize("how do I get the name") == ["name"]
    assert "get" in tokenize("obj.get_item")


def test_hangul_runs_become_overlapping_bigrams() -> None:
    assert tokenize("배포를 시작") == ["배포", "포를", "시작"]
    assert tokenize("값") == ["값"]  # a one-syllable run stays whole
    # Mixed scripts split at the boundary: the identifier stays whole.
    assert tokenize("CW_DEPLOY_TOKEN을")[0] == "cw_deploy_token"
    assert "을" in tokenize("CW_DEPLOY_TOKEN을")


def test_korean_particles_do_not_prevent_a_match() -> None:
    index = LexicalIndex(
        ["deploy", "review", "db"],
        [
            "배포는 금요일에 하지 않습니다",
            "리뷰어는 하루 안에 답합니다",
            "스키마 변경은 점검 시간에",
        ],
    )
    hits = index.search("배포를 언제 하나요", 3)
    assert [h.id for h in hits][:1] == ["deploy"]


def test_exact_identifier_ranks_its_chunk_first() -> None:
    texts = [
        "Deploy with the token from the portal; the deploy token expires.",
        "Set CW_DEPLOY_TOKEN before running the release.",
        "Token rotation and deploy schedules for every team.",
    ]
    index = LexicalIndex(["a", "b", "c"], texts)
    hits = index.search("CW_DEPLOY_TOKEN", 3)
    assert hits[0].id == "b"
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_no_shared_token_gives_no_hits() -> None:
    index = LexicalIndex(["a"], ["redis cache entries expire"])
    assert index.search("kubernetes", 5) == []
    assert index.search("   ", 5) == []
    assert index.search("redis", 0) == []
    assert LexicalIndex([], []).search("redis", 5) == []


def test_limit_keeps_the_best() -> None:
    texts = [("alpha " * n) + "filler words here" for n in range(1, 8)]
    index = LexicalIndex([str(i) for i in range(7)], texts)
    scores = {h.id: h.score for h in index.search("alpha", 7)}
    top = index.search("alpha", 3)
    assert len(top) == 3
    assert [h.id for h in top] == sorted(scores, key=lambda i: -scores[i])[:3]


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        LexicalIndex(["a", "b"], ["one"])


def test_cache_rebuilds_only_when_the_key_changes() -> None:
    cache = LexicalCache()
    corpus = {"ids": ["a"], "texts": ["first text"]}
    loads: list[int] = []

    def load() -> tuple[list[str], list[str]]:
        loads.append(1)
        return list(corpus["ids"]), list(corpus["texts"])

    first = cache.get((1, 1), load)
    assert cache.get((1, 1), load) is first and len(loads) == 1
    corpus.update(ids=["a", "b"], texts=["first text", "second text"])
    second = cache.get((2, 2), load)
    assert second is not first and len(second) == 2 and len(loads) == 2


def test_cache_builds_once_under_concurrent_first_use() -> None:
    cache = LexicalCache()
    barrier = threading.Barrier(4)
    results: list[LexicalIndex] = []

    def load() -> tuple[list[str], list[str]]:
        return ["a"], ["some text"]

    def worker() -> None:
        barrier.wait()
        results.append(cache.get("key", load))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.builds == 1 and all(r is results[0] for r in results)
