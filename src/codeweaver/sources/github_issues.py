"""Online source: known bugs and their fixes from GitHub issues (REST `GET /search/issues`).

For an error message or a "stopped working after upgrading" question the answer is often
an issue of the library: the query is the question's error line as a quoted phrase, else
the identifiers it names, with `is:issue` and `repo:` for the libraries it names
(`gh_issue_format.build_issue_query`); a question naming neither is not searched.

For the best few results the issue's comments are read (`GET /repos/{owner}/{repo}/issues/
{number}/comments`) and the answer-bearing one is shown with the issue: for a closed issue
the last maintainer comment, else the most +1'd one. Results are scored on the question's
terms (`scoring.term_score`), not GitHub's `score`; issues carry no licence, none is claimed.

Works without a token (search: 10 requests a minute, comments: 60 an hour); `GITHUB_TOKEN`
raises both. Searches and comments use GitHub's separate quotas, so each has its own client:
a used-up comment quota costs the comments, never the search (`gh_limits` blocks each).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from codeweaver.sources.base import SourceError, SourceInfo, SourceStatus, register_source
from codeweaver.sources.gh_issue_format import (
    answer_comment,
    build_issue_query,
    clean,
    issue_repo,
    login,
    snippet,
)
from codeweaver.sources.gh_limits import github_client
from codeweaver.sources.http import HttpPolicy, HttpStatusError
from codeweaver.sources.scoring import term_score
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

API_BASE = "https://api.github.com"
MAX_COMMENT_FETCHES = 3  # comments cost the small hourly quota: only the best few results
COMMENTS_PER_PAGE = 100
MAX_PAGE = 30
CACHED_ANSWERS = 256
TOKEN_REJECTED = (
    "GITHUB_TOKEN was rejected by GitHub (HTTP 401: bad credentials); fix it, or unset it: "
    "issue search works without a token"
)

T = TypeVar("T")


class GitHubIssuesSource:
    """Searches GitHub issues for known bugs; needs no token (one raises the rate limits)."""

    name = "github_issues"

    def __init__(
        self,
        token: str | None = None,
        *,
        base_url: str = API_BASE,
        policy: HttpPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._token = token or None
        options: dict[str, Any] = {
            "token": self._token,
            "base_url": base_url,
            "policy": policy,
            "transport": transport,
            "sleep": sleep,
            "clock": clock,
            "wall_clock": wall_clock,
        }
        self.client, self._search_limits = github_client(self.name, **options)
        self.comments_client, self._comment_limits = github_client(self.name, **options)
        # Answers by (repo, number, updated_at): the query variations of one question find
        # the same issues, and a new comment changes `updated_at`.
        self._answers: OrderedDict[Hashable, dict[str, Any] | None] = OrderedDict()
        self._pending: dict[Hashable, asyncio.Task[Any]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> GitHubIssuesSource:
        token = settings.github_token.get_secret_value() if settings.github_token else None
        policy = HttpPolicy.from_settings(settings)
        return cls(token, base_url=settings.github_api_url, policy=policy)

    def status(self) -> SourceStatus:
        blocked = self.client.blocked_reason
        if blocked:
            return SourceStatus("skipped", "backing off: " + re.sub(r"^skipped:?\s*", "", blocked))
        return SourceStatus("ready")

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.comments_client.aclose()

    def quota_left(self) -> str | None:
        parts = [
            self._search_limits.quota_left("searches this minute"),
            self._comment_limits.quota_left("requests this hour"),
        ]
        return "; ".join(p for p in parts if p) or None

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        q = build_issue_query(query)
        if not q or limit <= 0:
            return []  # precision first, and the unauthenticated quota is small
        data = await self._shared(("search", q, limit), lambda: self._search(q, limit))
        issues = [
            item
            for item in data.get("items", [])
            if isinstance(item, dict) and "pull_request" not in item and issue_repo(item)
        ]
        # The best first on the question's terms: they get the comment reads.
        issues.sort(
            key=lambda i: term_score(query, str(i.get("title", "")), clean(i.get("body"))),
            reverse=True,
        )
        issues = issues[:limit]
        read = [i for i in issues[:MAX_COMMENT_FETCHES] if _count(i, "comments")]
        answers = await asyncio.gather(*(self._answer(i) for i in read))
        chosen = {id(i): a for i, a in zip(read, answers, strict=True)}
        results = [self._result(i, chosen.get(id(i)), query) for i in issues]
        return sorted(results, key=lambda r: r.get("score") or 0.0, reverse=True)

    async def _search(self, q: str, limit: int) -> dict[str, Any]:
        try:
            data = await self.client.get_json(
                "/search/issues", {"q": q, "per_page": min(2 * limit, MAX_PAGE)}
            )
        except HttpStatusError as exc:
            if exc.status_code == 401 and self._token:
                raise SourceError(TOKEN_REJECTED, kind="auth") from exc
            raise
        if not isinstance(data, dict) or not isinstance(data.get("items", []), list):
            message = "github_issues returned an unexpected response (no `items` list)"
            raise SourceError(message, kind="bad_response")
        if data.get("incomplete_results"):
            logger.info("github_issues: the search timed out server-side; results are partial")
        return data

    async def _answer(self, issue: dict[str, Any]) -> dict[str, Any] | None:
        """The answer-bearing comment of an issue; None when none is, or when the comments
        cannot be read (the issue is still worth showing)."""
        repo, number = issue_repo(issue), issue.get("number")
        key = (repo, number, issue.get("updated_at"))
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        try:
            comments = await self._shared(("comments", *key), lambda: self._comments(issue))
        except SourceError as exc:
            logger.info("github_issues: no comments for %s#%s: %s", repo, number, exc)
            return None
        chosen = answer_comment(str(issue.get("state") or ""), comments)
        self._answers[key] = chosen
        if len(self._answers) > CACHED_ANSWERS:
            self._answers.popitem(last=False)
        return chosen

    async def _comments(self, issue: dict[str, Any]) -> list[Any]:
        # Comments come oldest first; a closed issue's answer is near the end of its thread.
        page = max(1, math.ceil(_count(issue, "comments") / COMMENTS_PER_PAGE))
        path = f"/repos/{issue_repo(issue)}/issues/{issue.get('number')}/comments"
        data = await self.comments_client.get_json(
            path, {"per_page": COMMENTS_PER_PAGE, "page": page}
        )
        if not isinstance(data, list):
            raise SourceError("github_issues: comments are not a list", kind="bad_response")
        return data

    async def _shared(self, key: Hashable, call: Callable[[], Awaitable[T]]) -> T:
        """One request for concurrent callers asking the same (the query variations)."""
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(_run(call))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._forget(key, done))
        # Shielded: a caller cut at its timeout must not cancel the request for the others.
        result: T = await asyncio.shield(task)
        return result

    def _forget(self, key: Hashable, done: asyncio.Task[Any]) -> None:
        if self._pending.get(key) is done:
            del self._pending[key]
        if not done.cancelled():
            done.exception()  # retrieved: a failure no caller awaited is not logged as lost

    def _result(
        self, issue: dict[str, Any], comment: dict[str, Any] | None, query: str
    ) -> SearchResult:
        repo = issue_repo(issue)
        number = issue.get("number")
        author = login(issue.get("user"))
        credit = f"issue by {author} in {repo}"
        if comment is not None:
            credit += f"; comment by {login(comment.get('user'))}"
        title = str(issue.get("title") or "")
        updated = issue.get("updated_at")
        return SearchResult(
            title=f"{repo}#{number}: {title}",
            url=str(issue.get("html_url") or f"https://github.com/{repo}/issues/{number}"),
            snippet=snippet(issue, comment),
            source=self.name,
            score=term_score(
                query, title, clean(issue.get("body")), clean((comment or {}).get("body"))
            ),
            date=updated[:10] if isinstance(updated, str) and updated else None,
            reference=f"github_issues:{repo}#{number}",
            attribution=credit,
        )


async def _run(call: Callable[[], Awaitable[T]]) -> T:
    return await call()


def _count(item: dict[str, Any], key: str) -> int:
    value = item.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@register_source(
    "github_issues",
    SourceInfo(
        mcp_tool="search_github",
        # Issue search needs an error line or an identifier too; it runs without a token.
        probe_query="AttributeError: 'DataFrame' object has no attribute 'append'",
        key="github_token",
    ),
)
def make_github_issues_source(settings: Settings) -> GitHubIssuesSource:
    return GitHubIssuesSource.from_settings(settings)
