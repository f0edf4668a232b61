"""A loopback Stack Exchange API 2.3 over StackEval posts, for offline evaluation.

Serves `/search/advanced`, `/similar`, `/questions/{ids}` and `/questions/{ids}/answers`
with the documented response shapes: the common wrapper (`items`, `has_more`,
`quota_max`, `quota_remaining`), the error wrapper with HTTP 400, `filter=withbody`
adding `body`. Every request is logged in memory (path, parameters, question ids
returned) so an evaluation can see what the pipeline asked and what it was shown.

    with serve_loopback(StackExchangeLoopback(Corpus.load(path))) as base_url:
        ...  # point `stackexchange_url` at base_url
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from codeweaver_eval.stackexchange.corpus import Corpus, Post, Reply, escape_title
from codeweaver_eval.stackexchange.limits import (
    DEFAULT_QUOTA,
    MAX_PER_SECOND,
    ApiError,
    Limits,
)
from codeweaver_eval.stackexchange.query import Query

API_PREFIX = "/2.3"
SITES = frozenset({"stackoverflow", "stackoverflow.com"})
MAX_PAGESIZE = 100
MAX_IDS = 100
CONTENT_LICENSE = "CC BY-SA 4.0"
BODY_FILTERS = frozenset({"withbody"})
PLAIN_FILTERS = frozenset({"default"})
LIST_SORTS = ("activity", "creation", "votes")
SEARCH_SORTS = (*LIST_SORTS, "relevance")
SEARCH_PATHS = frozenset({"/search/advanced", "/similar"})


@dataclass(frozen=True)
class LoggedRequest:
    """One request the loopback answered."""

    path: str
    params: dict[str, str]
    status: int
    question_ids: tuple[int, ...] = ()

    @property
    def query_chars(self) -> int:
        """Length of the longest free-text parameter sent (`q`, `title`)."""
        return max(len(self.params.get("q", "")), len(self.params.get("title", "")))

    def ranks(self) -> list[tuple[str, int]]:
        """(`stackoverflow:q<id>`, place among all the search's results) for a search;
        nothing for the other methods (an answers call lists posts, not a ranking)."""
        if self.path not in SEARCH_PATHS or self.status != 200:
            return []
        try:
            page, size = int(self.params.get("page", 1)), int(self.params.get("pagesize", 30))
        except ValueError:
            return []
        offset = (page - 1) * size
        return [(f"stackoverflow:q{i}", offset + n) for n, i in enumerate(self.question_ids, 1)]


class RequestLog(Protocol):
    """What `answer_systems.observed` reads: the loopback and the relay both have it."""

    @property
    def requests(self) -> Sequence[LoggedRequest]: ...

    def requests_since(self, start: int) -> list[LoggedRequest]: ...


def _bad(parameter: str) -> ApiError:
    return ApiError(400, "bad_parameter", parameter)


def question_json(post: Post, with_body: bool) -> dict[str, Any]:
    """A question in the shape `/search/advanced` returns it."""
    item: dict[str, Any] = {
        "tags": list(post.tags),
        "owner": post.asker.to_json(),
        "is_answered": post.is_answered,
        "view_count": post.view_count,
        "answer_count": post.answer_count,
        "score": post.question_score,
        "last_activity_date": post.last_activity,
        "creation_date": post.created,
        "question_id": post.question_id,
        "content_license": CONTENT_LICENSE,
        "link": post.link,
        "title": escape_title(post.title),
    }
    if post.answer_id is not None:  # the API leaves the key out when none is accepted
        item["accepted_answer_id"] = post.answer_id
    if with_body:
        item["body"] = post.body_html
    return item


def answer_json(post: Post, reply: Reply, with_body: bool) -> dict[str, Any]:
    """One answer in the shape `/questions/{ids}/answers` returns it."""
    item: dict[str, Any] = {
        "owner": reply.owner.to_json(),
        "is_accepted": reply.accepted,
        "score": reply.score,
        "last_activity_date": reply.created,
        "creation_date": reply.created,
        "answer_id": reply.answer_id,
        "question_id": post.question_id,
        "content_license": CONTENT_LICENSE,
    }
    if with_body:
        item["body"] = reply.body_html
    return item


def _int(params: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _bad(name) from None
    if not low <= value <= high:
        raise _bad(name)
    return value


def _choice(params: dict[str, str], name: str, allowed: Sequence[str], default: str) -> str:
    value = params.get(name) or default
    if value not in allowed:
        raise _bad(name)
    return value


def _tags(params: dict[str, str], name: str) -> list[str]:
    return [t.strip().lower() for t in params.get(name, "").split(";") if t.strip()]


def _with_body(params: dict[str, str]) -> bool:
    name = params.get("filter") or "default"
    if name in BODY_FILTERS or name.startswith("!"):
        return True  # a custom filter is opaque here; the ones clients build include body
    if name in PLAIN_FILTERS:
        return False
    raise _bad("filter")


def _ids(raw: str) -> list[int]:
    parts = [p for p in raw.split(";") if p]
    if not parts or len(parts) > MAX_IDS or not all(p.isdigit() for p in parts):
        raise _bad("ids")
    return [int(p) for p in parts]


class StackExchangeLoopback:
    """The API's state: corpus, throttles, request log; `app` is the ASGI app.

    `backoff_every`: every Nth response of a method carries `backoff: backoff_seconds`,
    which the next call to that method must honour (see `stackexchange.limits`).
    """

    def __init__(
        self,
        corpus: Corpus,
        *,
        quota_max: int = DEFAULT_QUOTA,
        backoff_every: int = 0,
        backoff_seconds: int = 2,
        max_per_second: int = MAX_PER_SECOND,
    ) -> None:
        self.corpus = corpus
        self.limits = Limits(
            quota_max=quota_max,
            backoff_every=backoff_every,
            backoff_seconds=backoff_seconds,
            max_per_second=max_per_second,
        )
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        routes = [
            Route(API_PREFIX + "/search/advanced", self._endpoint("search/advanced", self._search)),
            Route(API_PREFIX + "/similar", self._endpoint("similar", self._similar)),
            Route(API_PREFIX + "/questions/{ids}", self._endpoint("questions", self._questions)),
            Route(
                API_PREFIX + "/questions/{ids}/answers",
                self._endpoint("questions/answers", self._answers),
            ),
        ]
        self.app = Starlette(routes=routes, exception_handlers={404: self._no_method})

    @property
    def quota_max(self) -> int:
        return self.limits.quota_max

    @property
    def quota_remaining(self) -> int:
        return self.limits.quota_remaining

    def requests_since(self, start: int) -> list[LoggedRequest]:
        with self._lock:
            return list(self.requests[start:])

    # -- plumbing ------------------------------------------------------------------------

    def _endpoint(self, name: str, method: Any) -> Any:
        async def handle(request: Request) -> Response:
            params = dict(request.query_params)
            path = request.url.path.removeprefix(API_PREFIX)
            try:
                self._check_site(params)
                remaining = self.limits.admit(name)
                posts, has_more, items = method(params, request.path_params)
            except ApiError as exc:
                return self._error(path, params, exc)
            with self._lock:
                self.requests.append(
                    LoggedRequest(path, params, 200, tuple(p.question_id for p in posts))
                )
            wrapper: dict[str, Any] = {"items": items, "has_more": has_more}
            backoff = self.limits.backoff_for(name)
            if backoff is not None:
                wrapper["backoff"] = backoff
            wrapper |= {"quota_max": self.quota_max, "quota_remaining": remaining}
            return JSONResponse(wrapper)

        return handle

    def _check_site(self, params: dict[str, str]) -> None:
        site = params.get("site")
        if not site:
            raise ApiError(400, "bad_parameter", "site is required")
        if site.lower() not in SITES:
            raise ApiError(400, "bad_parameter", f"No site found for name `{site}`")

    def _error(self, path: str, params: dict[str, str], exc: ApiError) -> Response:
        with self._lock:
            self.requests.append(LoggedRequest(path, params, exc.status))
        body = {"error_id": exc.error_id, "error_message": exc.message, "error_name": exc.name}
        return JSONResponse(body, status_code=exc.status)

    async def _no_method(self, request: Request, exc: Exception) -> Response:
        path = request.url.path.removeprefix(API_PREFIX)
        error = ApiError(404, "no_method", "no method found with this name", status=404)
        return self._error(path, dict(request.query_params), error)

    # -- methods -------------------------------------------------------------------------

    @staticmethod
    def _page(params: dict[str, str], found: list[Any]) -> tuple[list[Any], bool]:
        page = _int(params, "page", 1, 1, 10**6)
        size = _int(params, "pagesize", 30, 0, MAX_PAGESIZE)
        start = (page - 1) * size
        return found[start : start + size], start + size < len(found)

    def _questions_page(self, params: dict[str, str], posts: list[Post]) -> Any:
        with_body = _with_body(params)
        shown, has_more = self._page(params, posts)
        return shown, has_more, [question_json(p, with_body) for p in shown]

    @staticmethod
    def _sorted(params: dict[str, str], posts: list[Post], sorts: Sequence[str]) -> list[Post]:
        """`posts` (best first, for relevance) in the requested sort; activity by default."""
        sort = _choice(params, "sort", sorts, "activity")
        order = _choice(params, "order", ("desc", "asc"), "desc")
        if sort != "relevance":
            field = {"activity": "last_activity", "creation": "created", "votes": "question_score"}
            posts = sorted(
                posts, key=lambda p: (getattr(p, field[sort]), p.question_id), reverse=True
            )
        return posts[::-1] if order == "asc" else posts

    def _search(self, params: dict[str, str], _: dict[str, Any]) -> Any:
        least = _int(params, "answers", 0, 0, 10**6)
        accepted = params.get("accepted", "").lower()
        found = self.corpus.search(
            Query.parse(params.get("q", "")),
            tagged=_tags(params, "tagged"),
            title=params.get("title", ""),
        )
        hidden = set(_tags(params, "nottagged"))
        found = [
            p
            for p in found
            if not hidden & set(p.tags)
            and p.answer_count >= least
            and (accepted not in ("true", "false") or p.has_accepted == (accepted == "true"))
        ]
        return self._questions_page(params, self._sorted(params, found, SEARCH_SORTS))

    def _similar(self, params: dict[str, str], _: dict[str, Any]) -> Any:
        title = params.get("title", "")
        if not title.strip():
            raise _bad("title")
        found = self.corpus.similar(title, tagged=_tags(params, "tagged"))
        hidden = set(_tags(params, "nottagged"))
        found = [p for p in found if not hidden & set(p.tags)]
        return self._questions_page(params, self._sorted(params, found, SEARCH_SORTS))

    def _posts(self, params: dict[str, str], path: dict[str, Any]) -> list[Post]:
        found = [self.corpus.by_id[i] for i in _ids(path["ids"]) if i in self.corpus.by_id]
        return self._sorted(params, list(dict.fromkeys(found)), LIST_SORTS)

    def _questions(self, params: dict[str, str], path: dict[str, Any]) -> Any:
        return self._questions_page(params, self._posts(params, path))

    def _answers(self, params: dict[str, str], path: dict[str, Any]) -> Any:
        """Every answer of the posts, sorted across them as the API sorts answers."""
        replies = [(post, reply) for post in self._posts(params, path) for reply in post.answers]
        sort = _choice(params, "sort", LIST_SORTS, "activity")
        key = {"activity": "created", "creation": "created", "votes": "score"}[sort]
        replies.sort(key=lambda pr: (getattr(pr[1], key), pr[1].answer_id), reverse=True)
        if _choice(params, "order", ("desc", "asc"), "desc") == "asc":
            replies.reverse()
        shown, has_more = self._page(params, replies)
        with_body = _with_body(params)
        items = [answer_json(post, reply, with_body) for post, reply in shown]
        return [post for post, _ in shown], has_more, items


class Served(Protocol):
    """Anything with an ASGI `app` to serve."""

    app: Any


@contextmanager
def serve_loopback(
    loopback: Served,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    lifespan: bool = False,
    name: str = "stackexchange-loopback",
) -> Iterator[str]:
    """Run `loopback` (or any app: the relay) with uvicorn in a background thread; yields
    the API's base URL. `lifespan`: run the app's startup and shutdown (the relay closes
    its upstream client there, in the server's own event loop)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # port 0: the system picks a free one
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        loopback.app, log_level="warning", access_log=False, lifespan="on" if lifespan else "off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"the {name} server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{bound}{API_PREFIX}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
