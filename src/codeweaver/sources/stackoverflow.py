"""Online source: Stack Overflow questions and their best answer (Stack Exchange API 2.3).

The search API matches every term of `q`, so a whole natural-language question, code and
all, finds nothing. A search is therefore:
- `/search/advanced` with a short title-like `q` (the title line or its core terms, at most
  12 words; an error line as a quoted phrase), tagged with the technologies the question
  names — as a preference: the tags are guesses, and a post tagged otherwise (`.net-core`
  for `.net`) must not be lost, so a tagged search that finds nothing is made again
  untagged, the technology words back in `q`;
- when that finds nothing, `/similar?title=…`, the API's method for natural-language titles;
- `/questions/{ids}/answers` for all returned ids, following `has_more` while an accepted
  answer is still missing, keeping per question the accepted answer, else the top-voted.
User text is never a search operator: a leading `-` (exclude), `[tag]`, quotes and
`name:value` operators (`is:`, `score:`, `title:` …) lose their meaning in `q`.
A query with Hangul or CJK is not sent (Stack Overflow is English; the pipeline also searches
the question's English form). Answers are converted from HTML to Markdown (code blocks kept),
carry their question (`asked`) and the CC BY-SA licence the API states (`content_license`).
Scores are the question's terms found in the post (`scoring.term_score`); an accepted answer
counts in full whatever its votes (recent ones have few), another by its votes.

Throttling follows https://api.stackexchange.com/docs/throttle:
- a `backoff: N` field in a response → no further call to **that method** for N seconds,
  shared by every search of this source, and never more than 30 requests a second
  (`so_throttle.MethodGate`);
- `quota_remaining: 0` → no further call until the next UTC midnight (the daily quota's
  reset; it is not documented more precisely);
- HTTP 400 with `error_id` 502 (`throttle_violation`) → no call for the seconds named in
  its message (default `THROTTLE_DEFAULT_SECONDS`), and a `SourceError` saying so.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx

from codeweaver.sources.base import McpTool, SourceError, SourceInfo, SourceStatus, register_source
from codeweaver.sources.http import HttpPolicy, SourceHttpClient, is_rate_limited
from codeweaver.sources.query_shapes import (
    MAX_QUERY_CHARS,
    cut_words,
    error_line,
    is_error_line,
    is_latin,
    latin_query,
    phrase,
    title_query,
)
from codeweaver.sources.scoring import term_score
from codeweaver.sources.so_format import (
    MAX_ASKED_CHARS,
    MAX_SNIPPET_CHARS,
    TECHNOLOGY_WORDS,
    attribution,
    clip_markdown,
    guess_tags,
    html_to_markdown,
    iso_date,
    normalise_votes,
    plain_words,
    without_tag_words,
)
from codeweaver.sources.so_throttle import MethodGate
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

API_BASE = "https://api.stackexchange.com/2.3"
SITE = "stackoverflow"
THROTTLE_ERROR_ID = 502
# The docs put an IP ban "on the order of 30 seconds to a few minutes" when no time is given.
THROTTLE_DEFAULT_SECONDS = 120.0
MAX_PAGE = 100  # the API's largest page and the most ids one vector may hold
# A question shown without its answer (no quota, answer not on its page) ranks below answers.
QUESTION_ONLY_WEIGHT = 0.5

# Answer pages read beyond the first while an accepted answer is missing.
MAX_ANSWER_PAGES = 3
_SECONDS = re.compile(r"(?<!\d)(\d+)\s*seconds?")  # from a run's first digit only: linear


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _items(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("items", []), list):
        raise SourceError(
            "stackoverflow returned an unexpected response (no `items` list)", kind="bad_response"
        )
    return [item for item in data.get("items", []) if isinstance(item, dict)]


def _api_error(response: httpx.Response) -> tuple[int, str, str] | None:
    """(error_id, error_name, error_message) of a Stack Exchange error body, if it is one."""
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("error_id"), int):
        return None
    return body["error_id"], str(body.get("error_name", "")), str(body.get("error_message", ""))


@dataclass
class _Limits:
    """What one search's responses said about the quota (searches may run concurrently)."""

    quota: dict[str, Any] | None = None  # the wrapper that used the daily quota up


def pick_answer(question: dict[str, Any], answers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The accepted answer, else the top-voted one, else None."""
    accepted_id = question.get("accepted_answer_id")
    for answer in answers:
        if answer.get("is_accepted") is True or (
            accepted_id is not None and answer.get("answer_id") == accepted_id
        ):
            return answer
    return max(answers, key=lambda a: _int(a.get("score")), default=None)


class StackOverflowSource:
    """Searches Stack Overflow through the Stack Exchange API; works without a key."""

    name = "stackoverflow"

    def __init__(
        self,
        key: str | None = None,
        *,
        base_url: str = API_BASE,
        policy: HttpPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._key = key or None
        self._now = now
        self._gate = MethodGate(self.name, sleep, clock)
        self._quota: tuple[int, int] | None = None  # (remaining, max) of the last answer
        self.client = SourceHttpClient(
            self.name,
            base_url=base_url.rstrip("/"),
            headers={"Accept": "application/json", "User-Agent": "codeweaver"},
            secrets=[self._key],
            policy=policy,
            transport=transport,
            sleep=sleep,
            clock=clock,
            response_hook=self._inspect,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> StackOverflowSource:
        key = settings.stackexchange_key.get_secret_value() if settings.stackexchange_key else None
        policy = HttpPolicy.from_settings(settings)
        return cls(key, base_url=settings.stackexchange_url, policy=policy)

    def status(self) -> SourceStatus:
        blocked = self.client.blocked_reason
        if blocked:
            return SourceStatus("skipped", "backing off: " + re.sub(r"^skipped:?\s*", "", blocked))
        return SourceStatus("ready")

    async def aclose(self) -> None:
        await self.client.aclose()

    def quota_left(self) -> str | None:
        if self._quota is None:
            return None
        remaining, most = self._quota
        return f"{remaining} of {most} requests today"

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        text = " ".join(query.split())
        if text and not is_latin(text):
            # Stack Overflow is English: of another language, only the English words the
            # asker kept (the pipeline also searches the question's English form).
            text = latin_query(text, TECHNOLOGY_WORDS)
        if not text or limit <= 0:
            return []
        pagesize = min(limit, MAX_PAGE)
        error = error_line(text) if is_error_line(text) else None
        common: dict[str, Any] = {
            "sort": "relevance",
            "order": "desc",
            "pagesize": pagesize,
            # withbody: a question whose answer is missing can still show its own text.
            "filter": "withbody",
        }
        tags = guess_tags(text)
        title = plain_words(title_query(text))
        tagged = {**common, "tagged": ";".join(tags)} if tags else common
        if error:
            first = untagged = phrase(error)
        else:
            # Tagged, `q` need not repeat the technology's name; untagged, it must.
            first, untagged = without_tag_words(title, tags), title
        queries = [(tagged, first)] + ([(common, untagged)] if tags else [])
        limits = _Limits()
        try:
            questions: list[dict[str, Any]] = []
            for params, q in queries:  # the tags are guesses: untagged before /similar
                search = {**params, "q": q, "answers": 1}
                questions = await self._questions("/search/advanced", search, pagesize, limits)
                if questions:
                    break
            if not questions:
                # `tagged` on /similar is a preference, so the guesses may stay.
                similar = {**tagged, "title": cut_words(error or title, MAX_QUERY_CHARS)}
                questions = await self._questions("/similar", similar, pagesize, limits)
            if not questions:
                return []
            answers = await self._answers(questions, limits)
            results = [self._result(q, answers.get(q["question_id"], []), text) for q in questions]
            return sorted(results, key=lambda r: r.get("score") or 0.0, reverse=True)
        finally:
            if limits.quota is not None:
                self._block_for_quota(limits.quota)

    async def _answers(
        self, questions: list[dict[str, Any]], limits: _Limits
    ) -> dict[int, list[dict[str, Any]]]:
        """Answers by question id: pages in vote order, more while an accepted one is
        missing and the API has more (none once the quota is gone)."""
        answers: dict[int, list[dict[str, Any]]] = {}
        ids = ";".join(str(q["question_id"]) for q in questions)
        wanted = {
            q["question_id"]: q["accepted_answer_id"]
            for q in questions
            if isinstance(q.get("accepted_answer_id"), int)
        }
        for page in range(1, MAX_ANSWER_PAGES + 2):
            if limits.quota is not None:
                break
            params = {
                "filter": "withbody",
                "sort": "votes",
                "order": "desc",
                "pagesize": MAX_PAGE,
                "page": page,
            }
            data = await self._call("/questions/answers", f"/questions/{ids}/answers", params)
            self._read_limits(data, limits)
            for answer in _items(data):
                answers.setdefault(_int(answer.get("question_id"), -1), []).append(answer)
            seen = {a.get("answer_id") for listed in answers.values() for a in listed}
            if not (isinstance(data, dict) and data.get("has_more") is True):
                break
            if all(answer_id in seen for answer_id in wanted.values()):
                break
        return answers

    async def _call(self, method: str, path: str, params: dict[str, Any]) -> Any:
        """One call to `method`, after its `backoff` (shared by every search)."""
        return await self._gate.call(
            method, lambda: self.client.get_json(path, self._params(params))
        )

    async def _questions(
        self, path: str, params: dict[str, Any], pagesize: int, limits: _Limits
    ) -> list[dict[str, Any]]:
        """The answered questions a search method returns (none once the quota is gone)."""
        if limits.quota is not None:
            return []
        data = await self._call(path, path, params)
        self._read_limits(data, limits)
        questions = [q for q in _items(data) if isinstance(q.get("question_id"), int)]
        # `/similar` has no `answers` filter: a question nobody answered cannot help.
        return [q for q in questions if _int(q.get("answer_count"), 1) > 0][:pagesize]

    # -- requests and limits -------------------------------------------------------------

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        merged = {**params, "site": SITE}
        if self._key:
            merged["key"] = self._key
        return merged

    def _read_limits(self, data: Any, limits: _Limits) -> None:
        """Note the quota left, and its exhaustion."""
        if not isinstance(data, dict):
            return
        remaining, most = data.get("quota_remaining"), data.get("quota_max")
        if isinstance(remaining, int) and isinstance(most, int):
            self._quota = (remaining, most)
        if limits.quota is None and remaining == 0:
            limits.quota = data

    def _block_for_quota(self, wrapper: dict[str, Any]) -> None:
        now = self._now()
        midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
        seconds = max(1.0, (midnight - now).total_seconds())
        quota_max = wrapper.get("quota_max", "?")
        hint = "" if self._key else "; set STACKEXCHANGE_KEY for a larger quota"
        reason = (
            f"daily Stack Exchange quota used up (quota_max {quota_max}); "
            f"waiting until 00:00 UTC ({seconds:.0f}s){hint}"
        )
        logger.warning("stackoverflow: %s", reason)
        self.client.block(seconds, reason)

    async def _inspect(self, response: httpx.Response) -> None:
        """Turn Stack Exchange error bodies into clear errors; throttles block the source."""
        if response.status_code < 400 or is_rate_limited(response):
            return  # successes are read by search(); 429/5xx are the shared client's to retry
        await response.aread()
        error = _api_error(response)
        if error is None:
            return
        error_id, error_name, message = error
        if error_id == THROTTLE_ERROR_ID:
            match = _SECONDS.search(message)
            seconds = float(match.group(1)) if match else THROTTLE_DEFAULT_SECONDS
            reason = f"throttled by the Stack Exchange API ({error_name}) for {seconds:g}s"
            logger.warning("stackoverflow: %s", reason)
            self.client.block(seconds, reason)
            raise SourceError(
                self.client.redact(f"stackoverflow {reason}: {message}"), kind="throttled"
            )
        self.client.record_failure(f"{error_name} ({error_id})")
        raise SourceError(
            self.client.redact(
                f"stackoverflow API error {error_id} {error_name}: {message} "
                f"(HTTP {response.status_code})"
            )
        )

    # -- results -------------------------------------------------------------------------

    def _result(
        self, question: dict[str, Any], answers: list[dict[str, Any]], query: str
    ) -> SearchResult:
        qid = question["question_id"]
        title = html.unescape(str(question.get("title", f"question {qid}")))
        link = str(question.get("link") or f"https://stackoverflow.com/q/{qid}")
        tags = ", ".join(str(t) for t in question.get("tags", []) if isinstance(t, str))
        question_votes = _int(question.get("score"))
        answer = pick_answer(question, answers)
        question_body = html_to_markdown(str(question.get("body", "")))
        if answer is None:
            header = f"[question only · {tags} · {question_votes} votes]"
            relevance = term_score(query, title, question_body)
            return SearchResult(
                title=title,
                url=link,
                snippet=f"{header}\n{clip_markdown(question_body, MAX_SNIPPET_CHARS)}".strip(),
                source=self.name,
                score=round(relevance * QUESTION_ONLY_WEIGHT, 3),
                date=iso_date(question.get("creation_date")),
                reference=f"stackoverflow:q{qid}",
                attribution=attribution("question", question, link),
            )
        aid = answer.get("answer_id")
        votes = _int(answer.get("score"))
        accepted = answer.get("is_accepted") is True or aid == question.get("accepted_answer_id")
        header = (
            f"[{'accepted' if accepted else 'top-voted'} · {tags} · {votes} votes"
            f" · question {question_votes} votes]"
        )
        body = html_to_markdown(str(answer.get("body", "")))
        answer_link = str(answer.get("link") or f"https://stackoverflow.com/a/{aid}")
        # An accepted answer counts in full whatever its votes; another by its votes.
        quality = 1.0 if accepted else 0.5 + 0.5 * normalise_votes(votes)
        return SearchResult(
            title=title,
            url=link,
            snippet=f"{header}\n{clip_markdown(body, MAX_SNIPPET_CHARS)}".strip(),
            asked=clip_markdown(question_body, MAX_ASKED_CHARS),
            source=self.name,
            score=round(term_score(query, title, question_body, body) * quality, 3),
            date=iso_date(answer.get("creation_date")),
            reference=f"stackoverflow:q{qid}/a{aid}",
            attribution=attribution("answer", answer, answer_link),
        )


@register_source("stackoverflow", SourceInfo(McpTool(
    "search_stackoverflow", "Search Stack Overflow", "Search Stack Overflow questions and "
    "answers. Best for error messages and practical how-tos.", intent="debugging"),
    probe_query="python list comprehension", key="stackexchange_key"))  # fmt: skip
def make_stackoverflow_source(settings: Settings) -> StackOverflowSource:
    return StackOverflowSource.from_settings(settings)
