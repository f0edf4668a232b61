"""The source interface, its status type and the registry of sources by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from codeweaver.registry import Registry
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings

SourceState = Literal["ready", "skipped"]


@dataclass(frozen=True)
class SourceStatus:
    state: SourceState
    reason: str = ""

    @property
    def usable(self) -> bool:
        return self.state == "ready"

    def __str__(self) -> str:
        return self.state if not self.reason else f"{self.state}: {self.reason}"


FailureKind = Literal[
    "auth",  # the key or token was rejected
    "rate_limited",  # the service's quota or rate limit is used up
    "throttled",  # the service answers, but with nothing because it is throttling us
    "dns",  # the host name does not resolve
    "tls",  # the TLS handshake or certificate failed
    "timeout",  # no answer in time
    "network",  # no connection for another reason
    "http",  # another error status
    "bad_response",  # an answer that is not what the service documents
]


@runtime_checkable
class ReportsBuilding(Protocol):
    """A source whose index may still be in the making (`prepare` or a background build)."""

    def building(self) -> str | None:
        """What is being built and how far, in a line; None when all is ready."""


class SourceError(RuntimeError):
    """A source could not answer; the run goes on without it. `kind` says why, when known."""

    def __init__(self, message: str, *, kind: FailureKind | None = None) -> None:
        super().__init__(message)
        self.kind: FailureKind | None = kind


@runtime_checkable
class ReportsQuota(Protocol):
    """A source that knows how much of its service's quota is left (from its last answer)."""

    def quota_left(self) -> str | None:
        """E.g. `287 of 300 requests today`, or None before any answer."""
        ...


@runtime_checkable
class KnowsInstalledVersions(Protocol):
    """A source that indexes installed packages and knows their versions."""

    def installed_versions(self) -> Mapping[str, str]:
        """Package name as users write it (`scikit-learn`, `sklearn`) -> installed version;
        read from the index already loaded ({} before that: never builds it, no I/O)."""
        ...


@runtime_checkable
class DocumentsApis(Protocol):
    """A source with a page per API (`pandas.concat`), found by its qualified name."""

    def api_pages(self, names: Sequence[str]) -> list[SearchResult]:
        """The pages of those of `names` it documents, in their order; from the index
        already loaded ([] before that: never builds it)."""
        ...


@runtime_checkable
class Source(Protocol):
    """Anything that can be searched. Implementations must be safe to call concurrently.

    A source may also set a class attribute `offline = True`: it searches a local corpus,
    which answers one query the same way every time (the graph then never searches it again
    with a query form it has already seen). Without it a source is taken to be online.
    """

    name: str

    def status(self) -> SourceStatus:
        """Whether the source can run now, and why not (never performs I/O)."""
        ...

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results for `query`; raises `SourceError` on failure."""
        ...


PhaseProgress = Callable[[str, int, int], None]  # (phase, done, total)


@runtime_checkable
class Preparable(Protocol):
    """A source with slow one-time work (an index build) that can run up front with progress."""

    def prepare(self, progress: PhaseProgress | None = None) -> None: ...


SourceFactory = Callable[["Settings"], Source]


@dataclass(frozen=True)
class McpTool:
    """An MCP search tool; the sources that name it are searched together by one call."""

    name: str  # `search_<something>`
    title: str
    description: str  # what it searches and what it is best for
    intent: Intent = "learning"  # the intent its sources are searched with


@dataclass(frozen=True)
class SourceInfo:
    """What the doors need to know of a source (never how to search it), declared where it
    registers: its MCP tool, its `doctor --live` check and the secret it reads."""

    # Its MCP tool, or the name of one another source declares (searched with it); None:
    # not offered over MCP.
    mcp_tool: McpTool | str | None = None
    # It searches this machine only (its class says so too, with `offline = True`).
    offline: bool = False
    # A query the service surely has results for: `doctor --live` searches an online
    # source for it (None: not checked).
    probe_query: str | None = None
    key: str | None = None  # the `Settings` secret it reads, shown in the key status
    key_required: bool = False  # without `key` it cannot run, so it is not checked

    @property
    def mcp_tool_name(self) -> str | None:
        tool = self.mcp_tool
        return tool.name if isinstance(tool, McpTool) else tool


# Built-in sources register themselves when their module is imported; other packages
# register theirs under the `codeweaver.sources` entry-point group.
SOURCES: Registry[SourceFactory] = Registry(
    "source",
    group="codeweaver.sources",
    builtins=[
        f"codeweaver.sources.{module}"
        for module in (
            "installed_docs",
            "python_docs",
            "npm_docs",
            "stackoverflow",
            "github",
            "github_issues",
            "tavily_docs",
            "web",
            "knowledge_base",
            "local_code",
        )
    ],
)
_INFO: dict[str, SourceInfo] = {}


def register_source(
    name: str, info: SourceInfo | None = None
) -> Callable[[SourceFactory], SourceFactory]:
    """Decorator: `@register_source("name", SourceInfo(...))` makes a factory available."""
    register = SOURCES.register(name)

    def decorate(factory: SourceFactory) -> SourceFactory:
        _INFO[name] = info or SourceInfo()
        return register(factory)

    return decorate


def unregister_source(name: str) -> None:
    """Remove a source and what was declared of it (a test's cleanup, a plugin's swap)."""
    SOURCES.unregister(name)
    _INFO.pop(name, None)


def source_names() -> list[str]:
    return SOURCES.names()


def source_info(name: str) -> SourceInfo:
    """What was declared of a registered source; an empty `SourceInfo` for one registered
    without it (an entry point's bare factory) or not registered (taken to be online)."""
    return _INFO.get(name, SourceInfo()) if name in SOURCES else SourceInfo()


def source_infos() -> dict[str, SourceInfo]:
    """Every registered source's `SourceInfo`, in name order."""
    return {name: source_info(name) for name in source_names()}


def create_source(name: str, settings: Settings) -> Source:
    return SOURCES.get(name)(settings)
