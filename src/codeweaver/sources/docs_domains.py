"""Technology → official documentation domains, used to keep docs searches on official sites.

The built-in table (`DEFAULT_TECHNOLOGIES`) is maintained here; users override or extend it
with a JSON file (`CODEWEAVER_DOCS_DOMAINS`) of the form ``{"tech": ["domain", ...]}``:

- an existing technology gets the file's domains instead of the built-in ones (its aliases
  keep working);
- a new technology is matched by its own name;
- an empty list removes a technology;
- the key ``"default"`` replaces the domains used when a question names no technology.

Matching is on whole words, case-insensitively. Aliases written in Hangul match at the start
of a word, because Korean attaches particles to the noun ("파이썬에서", "리액트의"). A space
in an alias also matches a hyphen, an underscore or nothing ("spring boot" matches
"spring-boot" and "springboot").
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_DOMAINS",
    "DEFAULT_TECHNOLOGIES",
    "GENERAL_DOMAINS",
    "MAX_DOMAINS",
    "DocsDomains",
    "DocsDomainsError",
    "Technology",
    "default_domains",
    "domains_for",
    "load_domains",
]

MAX_DOMAINS = 5
DEFAULT_KEY = "default"


class DocsDomainsError(ValueError):
    """The docs domains override file cannot be used (unreadable, not JSON, wrong shape)."""


@dataclass(frozen=True)
class Technology:
    domains: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    #: False for names that are also common words ("go", "node"): only the aliases match.
    match_name: bool = True


def _tech(*domains: str, aliases: Iterable[str] = (), match_name: bool = True) -> Technology:
    return Technology(tuple(domains), tuple(aliases), match_name)


#: The maintained table. The technology's own name is an alias too unless `match_name=False`.
DEFAULT_TECHNOLOGIES: Mapping[str, Technology] = {
    "python": _tech("docs.python.org", aliases=["python3", "py", "cpython", "파이썬"]),
    "javascript": _tech(
        "developer.mozilla.org", aliases=["js", "ecmascript", "es6", "자바 스크립트"]
    ),
    "html": _tech("developer.mozilla.org", aliases=["html5"]),
    "css": _tech("developer.mozilla.org", aliases=["css3", "scss"]),
    "web apis": _tech("developer.mozilla.org", aliases=["web api", "dom", "dom api"]),
    "typescript": _tech("typescriptlang.org", aliases=["ts", "tsc", "타입스크립트"]),
    # Not bare "node": it is as often a tree or DOM node as the runtime.
    "node": _tech(
        "nodejs.org", aliases=["node.js", "node js", "노드js", "노드.js"], match_name=False
    ),
    "react": _tech("react.dev", aliases=["reactjs", "react.js", "jsx", "리액트"]),
    "vue": _tech("vuejs.org", aliases=["vue.js", "vuejs", "뷰js"]),
    "angular": _tech("angular.dev", aliases=["angularjs", "앵귤러"]),
    "next.js": _tech("nextjs.org", aliases=["nextjs", "next js"]),
    "spring": _tech(
        "docs.spring.io", aliases=["spring boot", "spring framework", "스프링", "스프링 부트"]
    ),
    "java": _tech("docs.oracle.com", aliases=["jdk", "jvm", "자바"]),
    "kotlin": _tech("kotlinlang.org", aliases=["코틀린"]),
    # Not bare "go": the English verb would match most questions.
    "go": _tech(
        "go.dev",
        "pkg.go.dev",
        aliases=["golang", "go lang", "goroutine", "goroutines", "go 언어", "고랭"],
        match_name=False,
    ),
    "rust": _tech("doc.rust-lang.org", aliases=["rustlang", "rustc", "러스트"]),
    "c#": _tech("learn.microsoft.com", aliases=["csharp", ".net", "dotnet", "asp.net"]),
    "c++": _tech("en.cppreference.com", aliases=["cpp", "stl"]),
    "swift": _tech("docs.swift.org", aliases=["swiftui", "스위프트"]),
    "php": _tech("php.net"),
    "ruby": _tech("ruby-doc.org", aliases=["루비"]),
    "rails": _tech(
        "guides.rubyonrails.org", "api.rubyonrails.org", aliases=["ruby on rails", "레일즈"]
    ),
    "django": _tech("docs.djangoproject.com", aliases=["장고"]),
    "flask": _tech("flask.palletsprojects.com", aliases=["플라스크"]),
    "fastapi": _tech("fastapi.tiangolo.com", aliases=["fast api"]),
    "pydantic": _tech("docs.pydantic.dev"),
    "sqlalchemy": _tech("docs.sqlalchemy.org"),
    "pytest": _tech("docs.pytest.org"),
    "pandas": _tech("pandas.pydata.org", aliases=["판다스"]),
    "numpy": _tech("numpy.org", aliases=["넘파이"]),
    "pytorch": _tech("pytorch.org", aliases=["torch", "파이토치"]),
    "tensorflow": _tech("tensorflow.org", aliases=["텐서플로"]),
    "scikit-learn": _tech("scikit-learn.org", aliases=["scikit learn", "sklearn", "사이킷런"]),
    # Both moved to docs.langchain.com in 2025; the API reference is on its own domain.
    "langchain": _tech("docs.langchain.com", "reference.langchain.com", aliases=["랭체인"]),
    "langgraph": _tech("docs.langchain.com", "reference.langchain.com", aliases=["랭그래프"]),
    "docker": _tech("docs.docker.com", aliases=["dockerfile", "docker compose", "도커"]),
    "kubernetes": _tech("kubernetes.io", aliases=["k8s", "kubectl", "쿠버네티스"]),
    # Not "깃": as a Hangul prefix it would also match "깃허브" (GitHub).
    "git": _tech("git-scm.com"),
    # The docs live under postgresql.org/docs; a bare domain is what include_domains takes.
    "postgresql": _tech("postgresql.org", aliases=["postgres", "psql", "포스트그레스"]),
    "mysql": _tech("dev.mysql.com", aliases=["마이sql"]),
    "sqlite": _tech("sqlite.org", aliases=["sqlite3"]),
    "redis": _tech("redis.io", aliases=["레디스"]),
    "mongodb": _tech("mongodb.com", aliases=["mongo", "몽고db"]),
}

#: Used when the question names no known technology.
GENERAL_DOMAINS: tuple[str, ...] = (
    "docs.python.org",
    "developer.mozilla.org",
    "learn.microsoft.com",
    "docs.oracle.com",
    "en.cppreference.com",
)

#: Technology → domains of the built-in table (a read-only view for callers and tests).
DEFAULT_DOMAINS: Mapping[str, tuple[str, ...]] = {
    name: tech.domains for name, tech in DEFAULT_TECHNOLOGIES.items()
}

_SPACES = re.compile(r"\s+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_DOMAIN = re.compile(rf"^{_LABEL}(?:\.{_LABEL})+(?:/\S*)?$")
_HANGUL = "가-힣"


def _normalise_text(text: str) -> str:
    # NFC: Korean typed on macOS can arrive decomposed (NFD) and would not match.
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text).lower()).strip()


def _is_hangul(char: str) -> bool:
    return "가" <= char <= "힣"


def _alias_pattern(alias: str) -> str:
    """Regex for one alias with the word boundaries described in the module docstring."""
    body = r"[\s_-]*".join(re.escape(part) for part in alias.split(" "))
    before = rf"(?<![0-9a-z_{_HANGUL}])" if _is_hangul(alias[0]) else r"(?<![0-9a-z_])"
    after = "" if _is_hangul(alias[-1]) else r"(?![0-9a-z_])"
    return before + body + after


class DocsDomains:
    """An immutable technology table with its compiled matcher."""

    def __init__(
        self,
        technologies: Mapping[str, Technology],
        general: Iterable[str] = GENERAL_DOMAINS,
    ) -> None:
        self.technologies: Mapping[str, Technology] = dict(technologies)
        self.general: tuple[str, ...] = tuple(general)
        alias_to_tech: dict[str, str] = {}
        for name, tech in self.technologies.items():
            names = (name, *tech.aliases) if tech.match_name else tech.aliases
            for alias in names:
                alias_to_tech.setdefault(_normalise_text(alias), name)
        # Longest alias first so "자바스크립트" wins over "자바" and "node.js" over "js".
        ordered = sorted(alias_to_tech, key=len, reverse=True)
        self._alias_to_tech = alias_to_tech
        self._group_tech = {f"a{i}": alias_to_tech[alias] for i, alias in enumerate(ordered)}
        alternatives = "|".join(
            f"(?P<a{i}>{_alias_pattern(alias)})" for i, alias in enumerate(ordered)
        )
        self._matcher = re.compile(alternatives) if alternatives else None

    def technologies_in(self, question: str) -> list[str]:
        """Technologies named in `question`, in order of first mention, without repeats."""
        if self._matcher is None:
            return []
        found: list[str] = []
        for match in self._matcher.finditer(_normalise_text(question)):
            tech = self._group_tech[match.lastgroup or ""]
            if tech not in found:
                found.append(tech)
        return found

    def domains_for(self, question: str, limit: int = MAX_DOMAINS) -> list[str]:
        """Official docs domains for the technologies in `question` (or the general set)."""
        techs = self.technologies_in(question)
        if not techs:
            return list(self.general[:limit])
        domains: list[str] = []
        for tech in techs:
            for domain in self.technologies[tech].domains:
                if domain not in domains:
                    domains.append(domain)
        return domains[:limit]

    def merged(self, overrides: object, origin: str = "override") -> DocsDomains:
        """A new table with `overrides` (``{"tech": ["domain", ...]}``) applied over this one."""
        if not isinstance(overrides, dict):
            raise DocsDomainsError(
                f"{origin}: expected a JSON object like "
                f'{{"python": ["docs.python.org"]}}, got {type(overrides).__name__}'
            )
        technologies = dict(self.technologies)
        general = self.general
        for raw_key, raw_domains in overrides.items():
            key = _normalise_text(str(raw_key))
            if not key:
                raise DocsDomainsError(f"{origin}: empty technology name")
            domains = _validate_domains(raw_domains, f"{origin}: {raw_key!r}")
            # An alias ("k8s") names its technology, so the override replaces that one.
            key = key if key in technologies else self._alias_to_tech.get(key, key)
            if key == DEFAULT_KEY:
                general = domains
            elif not domains:
                technologies.pop(key, None)
            else:
                old = technologies.get(key)
                technologies[key] = (
                    Technology(domains, old.aliases, old.match_name) if old else Technology(domains)
                )
        return DocsDomains(technologies, general)


def _validate_domains(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise DocsDomainsError(
            f"{where}: expected a list of domains, got {type(value).__name__} {value!r}"
        )
    domains: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise DocsDomainsError(f"{where}: {item!r} is not a string")
        domain = _SCHEME.sub("", item.strip().lower()).rstrip("/")
        if not _DOMAIN.match(domain):
            raise DocsDomainsError(
                f'{where}: {item!r} is not a domain name (expected e.g. "docs.python.org")'
            )
        if domain not in domains:
            domains.append(domain)
    return tuple(domains)


_DEFAULT = DocsDomains(DEFAULT_TECHNOLOGIES, GENERAL_DOMAINS)


def default_domains() -> DocsDomains:
    """The built-in table."""
    return _DEFAULT


def domains_for(question: str, table: DocsDomains | None = None) -> list[str]:
    """Docs domains for the technologies named in `question`, in order, at most five;
    a small general set when none is named."""
    return (table or _DEFAULT).domains_for(question)


def load_domains(path: Path | str | None) -> DocsDomains:
    """The built-in table with the JSON file at `path` merged over it (None: built-in only).

    Raises `DocsDomainsError` naming the file and the problem when it cannot be used.
    """
    if path is None:
        return _DEFAULT
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise DocsDomainsError(f"cannot read docs domains file {path}: {reason}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocsDomainsError(
            f"docs domains file {path} is not valid JSON (line {exc.lineno}, column "
            f'{exc.colno}: {exc.msg}); expected {{"technology": ["domain", ...]}}'
        ) from None
    return _DEFAULT.merged(data, origin=f"docs domains file {path}")
