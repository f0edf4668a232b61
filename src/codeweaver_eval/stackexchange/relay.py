"""A local relay to the real Stack Exchange API 2.3, for measuring on the real service.

`eval answers --stackexchange-live` points Stack Overflow at this relay instead of at
the API. The relay forwards each `GET /2.3/...` upstream with the run's app key, passes
the status and JSON body back unchanged (errors, `backoff`, quota fields), and logs every
request as the loopback does (`LoggedRequest`: path, parameters without the key, status,
question ids returned), so `answer_systems.observed` works on it alike. It also:

- spends at most `budget` upstream requests; after that it answers, without calling
  upstream, with the API's own throttle error (HTTP 400, `error_id` 502), so the client
  backs off and the run goes on with Stack Overflow skipped;
- remembers the title of every question returned: StackEval rows carry no real question
  ids, so on the real API the post a question came from is the returned post with the
  question's title (`origin_by_title`).

    relay = StackExchangeRelay(key, budget=40)
    with serve_relay(relay) as base_url:
        ...  # point `stackexchange_url` at base_url
"""

from __future__ import annotations

import html
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from codeweaver.sources.stackoverflow import API_BASE, THROTTLE_ERROR_ID
from codeweaver_eval.answers_eval import Answer, Answered
from codeweaver_eval.stackexchange.loopback import API_PREFIX, LoggedRequest, serve_loopback

if TYPE_CHECKING:
    from codeweaver.config import Settings

# Under the client's own timeout (8 s by default), so it never gives up on a request the
# relay is still waiting for (and retries it, spending the budget twice).
UPSTREAM_TIMEOUT = 7.0
# The API's error for a service that cannot answer now; the client retries it.
UNAVAILABLE = (503, "temporarily_unavailable")


def normal_title(title: str) -> str:
    """A title compared as words: case folded, runs of whitespace made one space."""
    return " ".join(title.split()).casefold()


def _question_ids(body: Any) -> tuple[list[int], dict[int, str]]:
    """The question ids a response's `items` carry, in order, and each one's title."""
    items = body.get("items") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return [], {}
    ids: dict[int, None] = {}
    titles: dict[int, str] = {}
    for item in items:
        qid = item.get("question_id") if isinstance(item, dict) else None
        if not isinstance(qid, int) or isinstance(qid, bool):
            continue
        ids[qid] = None
        if isinstance(item.get("title"), str):
            titles.setdefault(qid, html.unescape(item["title"]))
    return list(ids), titles


def _error(error_id: int, name: str, message: str, status: int = 400) -> Response:
    body = {"error_id": error_id, "error_message": message, "error_name": name}
    return JSONResponse(body, status_code=status)


class StackExchangeRelay:
    """Request budget, request log and titles seen; `app` is the ASGI app."""

    def __init__(
        self,
        key: str | None,
        *,
        budget: int,
        upstream: str = API_BASE,
        timeout: float = UPSTREAM_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.budget = budget
        self.upstream = upstream.rstrip("/")
        self.used = 0  # upstream requests made (or attempted)
        self.requests: list[LoggedRequest] = []
        self._key = key or None
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._titles: dict[int, str] = {}
        self._lock = threading.Lock()
        routes = [Route(API_PREFIX + "/{path:path}", self._forward, methods=["GET"])]
        self.app: ASGIApp = Starlette(routes=routes, lifespan=self._lifespan)

    @property
    def host(self) -> str:
        """The upstream's host name, as a person is told where requests go."""
        return urlsplit(self.upstream).hostname or self.upstream

    def requests_since(self, start: int) -> list[LoggedRequest]:
        with self._lock:
            return list(self.requests[start:])

    def titles(self) -> dict[int, str]:
        """Every question returned so far: id → title (unescaped), first returned first."""
        with self._lock:
            return dict(self._titles)

    # -- plumbing ------------------------------------------------------------------------

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self._client is not None:
                await self._client.aclose()
                self._client = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self._timeout,
                transport=self._transport,
                headers={"Accept": "application/json", "User-Agent": "codeweaver-eval-relay"},
            )
        return self._client

    def _log(self, request: LoggedRequest, titles: Mapping[int, str] | None = None) -> None:
        with self._lock:
            self.requests.append(request)
            for qid, title in (titles or {}).items():
                self._titles.setdefault(qid, title)

    async def _forward(self, request: Request) -> Response:
        path = request.url.path.removeprefix(API_PREFIX)
        # The client's own key (if any) is neither logged nor forwarded: the run's is.
        params = {k: v for k, v in request.query_params.items() if k != "key"}
        if self.used >= self.budget:  # no await since: one event loop, no race
            self._log(LoggedRequest(path, params, 400))
            message = f"request budget of {self.budget} used up for this run"
            return _error(THROTTLE_ERROR_ID, "throttle_violation", message)
        self.used += 1
        sent = {**params, "key": self._key} if self._key else params
        try:
            upstream = await self._http().get(self.upstream + path, params=sent)
        except httpx.HTTPError as exc:
            self._log(LoggedRequest(path, params, UNAVAILABLE[0]))
            reason = f"the upstream API did not answer ({type(exc).__name__})"
            return _error(UNAVAILABLE[0], UNAVAILABLE[1], reason, status=UNAVAILABLE[0])
        try:
            body: Any = upstream.json()
        except ValueError:
            body = None
        ids, titles = _question_ids(body) if upstream.status_code == 200 else ([], {})
        self._log(LoggedRequest(path, params, upstream.status_code, tuple(ids)), titles)
        media_type = upstream.headers.get("content-type", "application/json")
        return Response(upstream.content, status_code=upstream.status_code, media_type=media_type)


def origin_by_title(relay: StackExchangeRelay, title: str) -> int | None:
    """The id of a returned question whose title is `title` (compared as words), the
    first returned if several share it; None if none came back."""
    wanted = normal_title(title)
    if not wanted:
        return None
    return next((qid for qid, t in relay.titles().items() if normal_title(t) == wanted), None)


def observed_live(answer: Answer, relay: StackExchangeRelay, titles: Mapping[str, str]) -> Answer:
    """`observed(answer, relay)`, with the origin post found by title: `titles` maps each
    question asked to the title of the post it came from."""
    from codeweaver_eval.answer_systems import observed

    seen = observed(answer, relay)

    async def answer_live(question: str) -> Answered:
        got = await seen(question)
        title = titles.get(question)
        origin = origin_by_title(relay, title) if title else None
        return got if origin is None else replace(got, origin=origin)

    return answer_live


def relay_settings(settings: Settings, base_url: str) -> Settings:
    """`loopback_settings` pointed at the relay, the key left to the relay alone."""
    from codeweaver_eval.answer_systems import loopback_settings

    served = loopback_settings(settings, base_url)
    return served.model_copy(update={"stackexchange_key": None})


def serve_relay(relay: StackExchangeRelay) -> AbstractContextManager[str]:
    """Run `relay` in a background thread; yields its base URL."""
    return serve_loopback(relay, lifespan=True, name="stackexchange-relay")
