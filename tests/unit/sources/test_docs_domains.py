"""docs_domains: aliases (incl. Korean), order, the cap, override files and their errors."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from codeweaver.sources.docs_domains import (
    DEFAULT_DOMAINS,
    GENERAL_DOMAINS,
    MAX_DOMAINS,
    DocsDomains,
    DocsDomainsError,
    Technology,
    default_domains,
    domains_for,
    load_domains,
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I list pods in k8s?", ["kubernetes.io"]),
        ("js array destructuring", ["developer.mozilla.org"]),
        ("why does my .py file not import", ["docs.python.org"]),
        ("Spring-Boot actuator endpoints", ["docs.spring.io"]),
        ("springboot profiles", ["docs.spring.io"]),
        ("node.js streams backpressure", ["nodejs.org"]),
        ("golang context cancellation", ["go.dev", "pkg.go.dev"]),
        (
            "langgraph checkpointer with langchain tools",
            ["docs.langchain.com", "reference.langchain.com"],
        ),
        ("postgres jsonb index", ["postgresql.org"]),
    ],
)
def test_english_names_and_aliases(question: str, expected: list[str]) -> None:
    assert domains_for(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("파이썬에서 리스트를 정렬하는 방법", ["docs.python.org"]),
        ("자바스크립트 클로저란?", ["developer.mozilla.org"]),
        ("리액트의 useState 사용법", ["react.dev"]),
        ("도커로 배포할 때 볼륨 설정", ["docs.docker.com"]),
        ("자바 스크립트 프로미스", ["developer.mozilla.org"]),
        ("Go 언어의 채널", ["go.dev", "pkg.go.dev"]),
    ],
)
def test_korean_aliases_match_with_particles(question: str, expected: list[str]) -> None:
    assert domains_for(question) == expected


def test_longer_alias_wins_over_its_prefix() -> None:
    # "자바스크립트" must not also count as "자바" (Java), nor "javascript" as "java".
    assert default_domains().technologies_in("자바스크립트와 javascript") == ["javascript"]
    assert default_domains().technologies_in("자바스크립트와 자바의 차이") == ["javascript", "java"]


def test_longest_alias_wins_whatever_the_table_order() -> None:
    # Java listed first: its Hangul alias is a prefix of JavaScript's and has no end boundary.
    table = DocsDomains(
        {
            "java": Technology(("docs.oracle.com",), ("자바",)),
            "javascript": Technology(("developer.mozilla.org",), ("자바스크립트",)),
        }
    )
    assert table.technologies_in("자바스크립트의 this") == ["javascript"]
    assert table.technologies_in("자바의 스트림") == ["java"]


def test_decomposed_hangul_is_normalised() -> None:
    # macOS input can arrive as NFD (separate jamo).
    assert domains_for(unicodedata.normalize("NFD", "파이썬에서 정렬")) == ["docs.python.org"]


def test_words_inside_other_words_do_not_match() -> None:
    table = default_domains()
    assert table.technologies_in("a random domain in numpy") == ["numpy"]  # not "dom", "py"
    assert table.technologies_in("일러스트 그리기") == []  # contains "러스트" (Rust)
    assert table.technologies_in("let's go visit each tree node") == []  # bare "go"/"node"


def test_order_follows_the_question_and_domains_are_not_repeated() -> None:
    assert domains_for("Django vs Flask vs FastAPI") == [
        "docs.djangoproject.com",
        "flask.palletsprojects.com",
        "fastapi.tiangolo.com",
    ]
    assert domains_for("FastAPI vs Django") == ["fastapi.tiangolo.com", "docs.djangoproject.com"]
    # html, css and javascript share one domain: listed once.
    assert domains_for("html css and javascript") == ["developer.mozilla.org"]
    assert default_domains().technologies_in("python then python3 then py") == ["python"]


def test_at_most_five_domains() -> None:
    question = "react, rust, golang, docker, kubernetes, git, redis and kotlin"
    domains = domains_for(question)
    assert len(domains) == MAX_DOMAINS
    assert domains == ["react.dev", "doc.rust-lang.org", "go.dev", "pkg.go.dev", "docs.docker.com"]


def test_no_technology_gives_the_general_set() -> None:
    domains = domains_for("what is a monad?")
    assert domains == list(GENERAL_DOMAINS)
    assert 0 < len(domains) <= MAX_DOMAINS


def test_table_covers_the_documented_technologies() -> None:
    for tech, domain in [
        ("python", "docs.python.org"),
        ("spring", "docs.spring.io"),
        ("react", "react.dev"),
        ("rust", "doc.rust-lang.org"),
        ("kubernetes", "kubernetes.io"),
    ]:
        assert domain in DEFAULT_DOMAINS[tech]
        assert domains_for(f"question about {tech}")[0] == domain
    assert len(DEFAULT_DOMAINS) >= 30


# --------------------------------------------------------------------------- overrides


def write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "domains.json"
    path.write_text(content, encoding="utf-8")
    return path


def test_no_file_means_the_built_in_table() -> None:
    assert load_domains(None) is default_domains()


def test_override_replaces_adds_and_removes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(
            {
                "python": ["https://docs.python.org/", "peps.python.org"],
                "htmx": ["htmx.org"],
                "java": [],
                "k8s": ["kubernetes.io", "helm.sh"],
                "default": ["devdocs.io"],
            }
        ),
    )
    table = load_domains(path)
    # Replaced, with scheme and trailing slash normalised; aliases still work.
    assert table.domains_for("파이썬 asyncio") == ["docs.python.org", "peps.python.org"]
    # Added, matched by its own name.
    assert table.domains_for("htmx swap") == ["htmx.org"]
    # Removed: Java is no longer recognised, so the (overridden) general set is used.
    assert table.domains_for("java streams") == ["devdocs.io"]
    # An alias as key overrides its technology, which keeps its other names.
    assert table.domains_for("kubernetes ingress") == ["kubernetes.io", "helm.sh"]
    # Everything else is untouched, and the defaults themselves are not mutated.
    assert table.domains_for("react hooks") == ["react.dev"]
    assert domains_for("java streams") == ["docs.oracle.com"]
    assert domains_for("파이썬 asyncio") == ["docs.python.org"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"python": ["docs.python.org"', "not valid JSON (line 1"),
        ('["docs.python.org"]', "expected a JSON object"),
        ('{"python": "docs.python.org"}', "expected a list of domains"),
        ('{"python": [42]}', "42 is not a string"),
        ('{"python": ["not a domain"]}', "'not a domain' is not a domain name"),
        ('{"": ["docs.python.org"]}', "empty technology name"),
    ],
)
def test_malformed_override_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(DocsDomainsError, match=re.escape(message)) as caught:
        load_domains(path)
    assert str(path) in str(caught.value)


def test_missing_override_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(DocsDomainsError, match="cannot read docs domains file") as caught:
        load_domains(missing)
    assert str(missing) in str(caught.value)
