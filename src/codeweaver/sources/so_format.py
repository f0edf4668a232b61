"""Pure helpers of the Stack Overflow source: tag guessing, HTML → Markdown, scores, licences."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from typing import Any

from markdownify import markdownify

# Technology words (lower case, as written in questions) → Stack Overflow tags. Ambiguous
# English words are left out on purpose ("go", "node", "spring", "c"): a wrong tag filters
# out good questions. Multi-word keys are matched as phrases.
TECH_TAGS: dict[str, str] = {
    # Python
    "python": "python",
    "python3": "python-3.x",
    "django": "django",
    "flask": "flask",
    "fastapi": "fastapi",
    "pandas": "pandas",
    "numpy": "numpy",
    "asyncio": "python-asyncio",
    "pytest": "pytest",
    "pip": "pip",
    # JavaScript and the web
    "javascript": "javascript",
    "js": "javascript",
    "typescript": "typescript",
    "node.js": "node.js",
    "nodejs": "node.js",
    "react": "reactjs",
    "reactjs": "reactjs",
    "react native": "react-native",
    "next.js": "next.js",
    "vue": "vue.js",
    "vue.js": "vue.js",
    "angular": "angular",
    "jquery": "jquery",
    "npm": "npm",
    "html": "html",
    "css": "css",
    "json": "json",
    # JVM, .NET, native
    "java": "java",
    "spring boot": "spring-boot",
    "kotlin": "kotlin",
    "android": "android",
    "swift": "swift",
    "ios": "ios",
    "c#": "c#",
    "csharp": "c#",
    ".net": ".net",
    "c++": "c++",
    "cpp": "c++",
    "golang": "go",
    "rust": "rust",
    "ruby": "ruby",
    "rails": "ruby-on-rails",
    "php": "php",
    # Data
    "sql": "sql",
    "mysql": "mysql",
    "postgres": "postgresql",
    "postgresql": "postgresql",
    "sqlite": "sqlite",
    "mongodb": "mongodb",
    "redis": "redis",
    # Tools and platforms
    "docker": "docker",
    "dockerfile": "dockerfile",
    "docker-compose": "docker-compose",
    "kubernetes": "kubernetes",
    "k8s": "kubernetes",
    "git": "git",
    "github actions": "github-actions",
    "bash": "bash",
    "linux": "linux",
    "regex": "regex",
    "aws": "amazon-web-services",
    "pytorch": "pytorch",
    "tensorflow": "tensorflow",
}
MAX_TAGS = 3
# Names of technologies, as written and as tagged: alone they do not narrow a search.
TECHNOLOGY_WORDS = frozenset(TECH_TAGS) | frozenset(TECH_TAGS.values())

# A key must not be part of a longer word: "java" in "javascript", "git" in "github". Only
# Latin letters and digits count as "longer": Korean particles attach to the name itself
# ("pandas를", "python에서") and must not hide it.
_TAG_PATTERNS = [
    (
        re.compile(
            r"(?<![A-Za-z0-9_.#+-])" + re.escape(word) + r"(?![A-Za-z0-9_#+-]|\.[A-Za-z0-9_])"
        ),
        tag,
    )
    for word, tag in TECH_TAGS.items()
]


def guess_tags(text: str, limit: int = MAX_TAGS) -> list[str]:
    """Up to `limit` distinct tags for the technologies `text` names, in order of mention."""
    lowered = text.lower()
    found: list[tuple[int, str]] = []
    for pattern, tag in _TAG_PATTERNS:
        match = pattern.search(lowered)
        if match:
            found.append((match.start(), tag))
    tags: list[str] = []
    for _, tag in sorted(found):
        if tag not in tags:
            tags.append(tag)
    return tags[:limit]


# A dash that starts a word is the site search's "exclude this word": `-O2` in a question
# means the flag, so the dash goes (the word stays required).
_EXCLUDE_MARK = re.compile(r"(?<!\S)-+(?=\S)")
# The site search's `name:value` operators (https://stackoverflow.com/help/searching):
# "is:answer" in a question is words, so the colon goes.
_SITE_OPERATOR = re.compile(
    r"(?<!\S)(title|body|is|score|answers|hasaccepted|isaccepted|views|user|created|"
    r"lastactive|closed|duplicate|migrated|locked|wiki|url|code|inquestion|infavorites|"
    r"hasnotice|collective):(?=\S)",
    re.IGNORECASE,
)


def plain_words(text: str) -> str:
    """`text` with nothing the site search would read as an operator."""
    return _SITE_OPERATOR.sub(r"\1 ", _EXCLUDE_MARK.sub("", text))


def without_tag_words(query: str, tags: list[str]) -> str:
    """`query` without the technology words `tags` already carry ("pandas NaT NaN" tagged
    pandas → "NaT NaN"): the API requires every word of `q`, and a post tagged [pandas]
    need not say "pandas" again. The query itself when nothing else would be left."""
    kept = [w for w in query.split() if TECH_TAGS.get(w.lower().strip(",.?!:")) not in tags]
    return " ".join(kept) if kept else query


# A vote score of VOTES_HALF maps to 0.5. The curve v / (v + VOTES_HALF) is monotonic,
# saturates smoothly (50 votes → 0.91, 500 → 0.99) and needs no per-query maximum.
VOTES_HALF = 5.0


def normalise_votes(votes: int) -> float:
    """A Stack Overflow vote score in [0, 1]: 0 for zero or negative, v / (v + 5) above."""
    if votes <= 0:
        return 0.0
    return votes / (votes + VOTES_HALF)


# Stack Overflow's licence changes, for a post whose `content_license` is missing (an older
# filter): content contributed before a date keeps its licence.
_CC_BY_SA_3_FROM = datetime(2011, 4, 8, tzinfo=UTC)
_CC_BY_SA_4_FROM = datetime(2018, 5, 2, tzinfo=UTC)


def cc_by_sa_version(created: int) -> str:
    """The CC BY-SA version of a post contributed at epoch second `created`."""
    when = datetime.fromtimestamp(created, UTC)
    if when < _CC_BY_SA_3_FROM:
        return "2.5"
    if when < _CC_BY_SA_4_FROM:
        return "3.0"
    return "4.0"


def post_licence(post: dict[str, Any]) -> str:
    """The licence the API states for a post (`content_license`, e.g. "CC BY-SA 4.0"; an
    edited old post carries the newer one), else the one its creation date implies."""
    stated = post.get("content_license")
    if isinstance(stated, str) and stated.strip():
        return stated.strip()
    created = post.get("creation_date")
    version = cc_by_sa_version(created) if isinstance(created, int) else "4.0"
    return f"CC BY-SA {version}"


def iso_date(epoch: Any) -> str | None:
    if isinstance(epoch, int) and not isinstance(epoch, bool):
        return datetime.fromtimestamp(epoch, UTC).date().isoformat()
    return None


def owner_credit(owner: Any) -> str:
    """`display name (profile link)`; deleted users have no link."""
    if not isinstance(owner, dict):
        return "unknown user"
    name = html.unescape(str(owner.get("display_name") or "unknown user"))
    link = owner.get("link")
    return f"{name} ({link})" if isinstance(link, str) and link else name


def attribution(kind: str, post: dict[str, Any], link: str) -> str:
    """Licence attribution, e.g. `answer by Ann (https://…), CC BY-SA 4.0, https://…`."""
    return f"{kind} by {owner_credit(post.get('owner'))}, {post_licence(post)}, {link}"


# A block's text stops at the next fence: from every ``` of an unclosed run, `.*?` would
# scan to the end of the post.
_FENCED = re.compile(r"(```(?:(?!```).)*?\n```)", re.DOTALL)


def _code_language(element: Any) -> str | None:
    # Stack Overflow marks a code block's language as a `lang-xx` class on <pre>.
    classes = element.get("class") or []
    for name in classes:
        if name.startswith("lang-") and name not in ("lang-none", "lang-default"):
            return str(name[len("lang-") :])
    return None


def html_to_markdown(body: str) -> str:
    """A post's HTML as Markdown; code blocks stay fenced and verbatim."""
    text = markdownify(
        body,
        heading_style="ATX",
        bullets="-",
        code_language_callback=_code_language,
        # Escaping `_` and `*` in prose would mangle identifiers such as read_file.
        escape_underscores=False,
        escape_asterisks=False,
    )
    # Collapse runs of blank lines in prose only; code blocks stay byte for byte.
    parts = _FENCED.split(str(text))
    return "".join(
        part if part.startswith("```") else re.sub(r"\n{3,}", "\n\n", part) for part in parts
    ).strip()


# How much of an answer a result carries, and of the question it answers (shown beside the
# closest source as its context).
MAX_SNIPPET_CHARS = 3000
MAX_ASKED_CHARS = 1500


def clip_markdown(text: str, max_chars: int) -> str:
    """`text` cut to about `max_chars`, at a paragraph break when one is near, fences closed."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    paragraph = cut.rfind("\n\n")
    if paragraph > max_chars // 2:
        cut = cut[:paragraph]
    cut = cut.rstrip()
    if cut.count("```") % 2:
        cut += "\n```"
    return cut + "\n…"
