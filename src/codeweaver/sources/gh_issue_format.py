"""Pure helpers of the GitHub issues source: the search query, the answer, the snippet.

The query is the question's error line as a quoted phrase (cut before values only the
asker has: paths, numbers, `key=value`), else the identifiers it names, plus `is:issue` and
`repo:` for the libraries it names; never prose words, which match every issue.
"""

from __future__ import annotations

import re
from typing import Any

from codeweaver.sources.query_shapes import (
    MAX_QUERY_CHARS,
    code_terms,
    cut_words,
    error_line,
    is_latin,
    phrase,
)

MAX_REPOS = 2
MAX_TERMS = 2  # issue search requires every term: more than two identifiers finds nothing
MAX_PHRASE_CHARS = 100
MIN_LEAD_WORDS = 2  # message words kept after the error name for `Name: message` phrases
MIN_SEGMENT_WORDS = 3  # words of a message part quoted without the error name
BODY_CHARS = 600
COMMENT_CHARS = 900
MAINTAINERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})

# Library names in questions → the repositories whose issue trackers hold their known bugs.
# Django is left out on purpose: its tickets live on its own tracker, and GitHub issues are
# disabled for django/django. Python itself too: a question names it next to the library
# whose tracker holds the answer.
LIBRARY_REPOS: dict[str, tuple[str, ...]] = {
    "pandas": ("pandas-dev/pandas",),
    "numpy": ("numpy/numpy",),
    "scipy": ("scipy/scipy",),
    "polars": ("pola-rs/polars",),
    "flask": ("pallets/flask",),
    "fastapi": ("fastapi/fastapi",),
    "pydantic": ("pydantic/pydantic",),
    "requests": ("psf/requests",),
    "httpx": ("encode/httpx",),
    "pytest": ("pytest-dev/pytest",),
    "sqlalchemy": ("sqlalchemy/sqlalchemy",),
    "celery": ("celery/celery",),
    "mypy": ("python/mypy",),
    "pip": ("pypa/pip",),
    "langchain": ("langchain-ai/langchain",),
    "langgraph": ("langchain-ai/langgraph",),
    "pytorch": ("pytorch/pytorch",),
    "torch": ("pytorch/pytorch",),
    "tensorflow": ("tensorflow/tensorflow",),
    "scikit-learn": ("scikit-learn/scikit-learn",),
    "sklearn": ("scikit-learn/scikit-learn",),
    "matplotlib": ("matplotlib/matplotlib",),
    "react": ("facebook/react",),
    "reactjs": ("facebook/react",),
    "next.js": ("vercel/next.js",),
    "nextjs": ("vercel/next.js",),
    "vue": ("vuejs/core",),
    "vue.js": ("vuejs/core",),
    "vuejs": ("vuejs/core",),
    "angular": ("angular/angular",),
    "svelte": ("sveltejs/svelte",),
    "typescript": ("microsoft/TypeScript",),
    "node.js": ("nodejs/node",),
    "nodejs": ("nodejs/node",),
    "deno": ("denoland/deno",),
    "webpack": ("webpack/webpack",),
    "vite": ("vitejs/vite",),
    "jest": ("jestjs/jest",),
    "eslint": ("eslint/eslint",),
    "axios": ("axios/axios",),
    "electron": ("electron/electron",),
    # The docker command's errors are reported against the CLI or the engine.
    "docker": ("docker/cli", "moby/moby"),
    "kubernetes": ("kubernetes/kubernetes",),
    "kubectl": ("kubernetes/kubernetes",),
    "k8s": ("kubernetes/kubernetes",),
    "terraform": ("hashicorp/terraform",),
    "rust": ("rust-lang/rust",),
    "golang": ("golang/go",),
    "flutter": ("flutter/flutter",),
    "vscode": ("microsoft/vscode",),
}

# Latin letters only bound a name: a Korean particle ("pandas를") must not hide it.
_LIBRARY_PATTERNS = [
    (re.compile(r"(?<![A-Za-z0-9_.#+-])" + re.escape(name) + r"(?![A-Za-z0-9_#+-])"), name)
    for name in LIBRARY_REPOS
]
# English words that are library names only in code-like company: `requests.get`,
# `import requests`, "the requests library", "React hooks".
_AMBIGUOUS = frozenset({"requests", "react"})
_CONTEXT = (
    r"\b(?:import|from)\s+{0}\b|\b{0}\.[a-z_]|\bpython\s+{0}\b"
    r"|\b{0}\s+(?:library|module|package|lib|hooks?|components?|apps?|version|v?\d)"
)
_PROPER_NOUNS = {"react": re.compile(r"\bReact\b")}

# A message token only the asker has: a path, `key=value`, a number, an address.
_SPECIFIC = re.compile(r"[/\\=]|^\W*\d+(?:[.,:x]\d+)*\W*$|0x[0-9a-fA-F]+")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
# Words that end a clause of the question rather than the message ("… 'map') in next.js").
_CONNECTORS = frozenset("in on at by for with from to of when after while and or but using".split())
# A comment's text stops at the next `<!--`: from every one of an unclosed run, `.*?`
# would scan to the end of the issue.
_HTML_COMMENT = re.compile(r"<!--(?:(?!<!--).)*?-->", re.DOTALL)


def repos_named(text: str) -> list[str]:
    """The repositories of the libraries `text` names, in order of first mention."""
    lowered = text.lower()
    found: list[tuple[int, str]] = []
    for pattern, name in _LIBRARY_PATTERNS:
        match = pattern.search(lowered)
        if match is None or (name in _AMBIGUOUS and not _in_code_context(name, text)):
            continue
        found += [(match.start(), repo) for repo in LIBRARY_REPOS[name]]
    return list(dict.fromkeys(repo for _, repo in sorted(found, key=lambda f: f[0])))


def _in_code_context(name: str, text: str) -> bool:
    proper = _PROPER_NOUNS.get(name)
    if proper is not None and proper.search(text):
        return True
    return re.search(_CONTEXT.format(re.escape(name)), text.lower()) is not None


def error_terms(error: str) -> tuple[str | None, str]:
    """The part of an error line worth quoting (None if no part is), and its bare name.

    `KeyError: 'id'` → ("KeyError: 'id'", "KeyError"). The message ends at its first
    sentence or where the question names a library ("… in next.js"). A message that starts
    with a value of the asker's own ("index 5 is out of bounds …") has its longest
    value-free part quoted, without the name."""
    name, _, message = error.partition(":")
    name = name.strip()
    message = _SENTENCE_END.split(message, maxsplit=1)[0].strip().rstrip(".?!")
    segments: list[list[str]] = [[]]
    previous = ""
    for token in message.split():
        if previous in _CONNECTORS and token.rstrip(",.;:").lower() in LIBRARY_REPOS:
            break  # "… in next.js": the question goes on ("Jest encountered …" does not)
        previous = token.lower()
        if _SPECIFIC.search(token):
            segments.append([])
        else:
            segments[-1].append(token)
    for segment in segments:
        while segment and segment[-1].lower() in _CONNECTORS:
            segment.pop()
    bare = name.rsplit(".", 1)[-1]
    if len(segments[0]) >= MIN_LEAD_WORDS:
        return f"{name}: {' '.join(segments[0])}", bare
    longest = max(segments, key=len)
    if len(longest) >= MIN_SEGMENT_WORDS:
        return " ".join(longest), bare
    return None, bare


def build_issue_query(text: str) -> str:
    """The `q` of an issue search for `text`, or "" when it names no error or identifier.

    At most `MAX_QUERY_CHARS`; non-English text gets "" (its English form is searched)."""
    if not is_latin(text):
        return ""
    qualifiers = ["is:issue", *(f"repo:{r}" for r in repos_named(text)[:MAX_REPOS])]
    budget = MAX_QUERY_CHARS - len(" ".join(qualifiers)) - 1
    error = error_line(text)
    quoted, bare = error_terms(error) if error else (None, "")
    terms: list[str] = []
    if quoted:
        terms.append(phrase(cut_words(quoted, min(MAX_PHRASE_CHARS, budget - 2))))
    else:
        # The error's own name (`KeyError`, `requests.exceptions.ConnectionError`) is `bare`.
        names = [t for t in code_terms(text) if t.rsplit(".", 1)[-1] != bare][:MAX_TERMS]
        if not names and not (bare and len(qualifiers) > 1):
            return ""  # a bare error name alone matches any issue anywhere
        terms += ([bare] if bare else []) + names
    kept: list[str] = []
    for term in terms:
        if len(" ".join([*kept, term])) <= budget:
            kept.append(term)
    return " ".join(kept + qualifiers) if kept else ""


def issue_repo(item: dict[str, Any]) -> str | None:
    """`owner/name` of a search item, from its `repository_url`."""
    parts = str(item.get("repository_url") or "").rstrip("/").split("/")
    return f"{parts[-2]}/{parts[-1]}" if len(parts) >= 2 and all(parts[-2:]) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def approval(comment: dict[str, Any]) -> tuple[int, int]:
    """(+1 reactions, all reactions); (0, 0) when the answer carries no reaction rollup."""
    reactions = comment.get("reactions")
    if not isinstance(reactions, dict):
        return 0, 0
    return _count(reactions.get("+1")), _count(reactions.get("total_count"))


def _is_bot(comment: dict[str, Any]) -> bool:
    user = comment.get("user")
    return isinstance(user, dict) and user.get("type") == "Bot"


def answer_comment(state: str, comments: list[Any]) -> dict[str, Any] | None:
    """The comment that most likely holds the answer, or None.

    For a closed issue, the last comment by a maintainer (owner, member, collaborator);
    else the comment with the most +1 reactions, if any has one. Bots (stale notices,
    CI reports) never count."""
    usable = [
        c
        for c in comments
        if isinstance(c, dict) and str(c.get("body") or "").strip() and not _is_bot(c)
    ]
    if state == "closed":
        by_maintainers = [c for c in usable if c.get("author_association") in MAINTAINERS]
        if by_maintainers:
            return by_maintainers[-1]
    best = max(usable, key=approval, default=None)
    return best if best is not None and approval(best)[0] > 0 else None


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters at a line or word end; a code fence the cut
    leaves open is closed, so the Markdown around the snippet still renders."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = cut.rfind("\n")
    if end < limit // 2:
        end = cut.rfind(" ")
    cut = (cut[:end] if end > 0 else cut).rstrip() + " …"
    return cut + "\n```" if cut.count("```") % 2 else cut


def clean(markdown: Any) -> str:
    """Issue Markdown without template comments and runs of blank lines."""
    text = _HTML_COMMENT.sub("", str(markdown or "")).replace("\r\n", "\n")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def login(user: Any) -> str:
    return str(user.get("login") or "ghost") if isinstance(user, dict) else "ghost"


def snippet(item: dict[str, Any], comment: dict[str, Any] | None) -> str:
    """`[issue · state · labels: …]`, the issue body, then the answer-bearing comment."""
    labels = [
        str(label.get("name")) for label in item.get("labels") or [] if isinstance(label, dict)
    ]
    state = str(item.get("state") or "open")
    header = f"[issue · {state}" + (f" · labels: {', '.join(labels)}]" if labels else "]")
    parts = [header]
    body = clip(clean(item.get("body")), BODY_CHARS)
    if body:
        parts.append(body)
    if comment is not None:
        role = str(comment.get("author_association") or "none").lower()
        plus = approval(comment)[0]
        votes = f", 👍 {plus}" if plus else ""
        text = clip(clean(comment.get("body")), COMMENT_CHARS)
        parts.append(f"\n**Comment by {login(comment.get('user'))}** ({role}{votes}):\n{text}")
    return "\n".join(parts)
