"""Which CodeWeaver session a `/v1` conversation continues, from its messages alone.

An OpenAI client keeps the conversation and sends all of it with each request. Its prior
transcript — the user and assistant messages before the last user message; system,
developer and tool messages ignored — is read as turns, and a session continues only if
its recorded turns are exactly those: as many, each question the user message, each
answer what the client got back (its assistant text, whitespace-normalised, is the
recorded answer, or that answer then our sources list). One such session: the request
continues it. None, or several (two chats that began alike and got the same answers from
the cache): a new session starts, seeded with the client's prior turns — in the session
index and in the thread, so the model remembers them. So two chats never merge, and a
client that edits or regenerates an earlier message goes on in a new session.

New sessions are numbered per (user, first question) as `oai-<key>-<k>`, so a request
finds its session in a few lookups; past `MAX_SAME_START` one gets a random id, which
only the `X-CodeWeaver-Session` header can name again. A new session is the first
number whose claim creates it: an id anyone can compute is its owner's from before its
first turn runs, and a number another server (or user) took meanwhile is passed over.
While a run answers in a session, no other request of this process continues it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
from collections.abc import AsyncGenerator, Sequence

from codeweaver.api.conversations import SessionNotFoundError, new_session_id
from codeweaver.api.errors import json_safe
from codeweaver.api.openai_schemas import ChatMessage, message_text
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.memory.sessions import Turn

logger = logging.getLogger(__name__)

# Chats that begin with the same question get numbered sessions; past this many the
# next one gets a random id.
MAX_SAME_START = 16
# (question, answer) as the client sent them.
PriorTurn = tuple[str, str]
# Clients that show `reasoning_content` may send it back inside the assistant's content,
# ahead of the answer: it is no part of what was answered.
_REASONING = re.compile(
    r"\A\s*(?:<think>.*?</think>|<details\b[^>]*\btype=\"reasoning\"[^>]*>.*?</details>)",
    re.DOTALL,
)


def _normal(text: str) -> str:
    return " ".join(text.split())


def conversation_key(user: str, first_question: str) -> str:
    """A stable digest of who asks and how the chat began (whitespace-normalised)."""
    payload = json.dumps([user, _normal(first_question)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _answer_text(message: ChatMessage) -> str:
    text = message_text(message)
    while (reasoning := _REASONING.match(text)) is not None:
        text = text[reasoning.end() :]
    return text.strip()


def prior_turns(messages: Sequence[ChatMessage]) -> list[PriorTurn]:
    """The turns of `messages` (the transcript before the question): each user message
    with the assistant text after it.

    A user message with no answer after it is left out: the server records a turn only
    once answered, and drops an interrupted question from the thread. So is an assistant
    message before any question (a greeting). Lone surrogates become U+FFFD, as in every
    text this API stores.
    """
    turns: list[PriorTurn] = []
    question: str | None = None
    answers: list[str] = []
    for message in [*messages, ChatMessage(role="user")]:  # the sentinel ends the last turn
        if message.role == "user":
            if question is not None and any(answers):
                turns.append((question, "\n\n".join(a for a in answers if a)))
            question, answers = message_text(message).strip(), []
        elif message.role == "assistant" and question is not None:
            answers.append(_answer_text(message))
    return [(json_safe(q), json_safe(a)) for q, a in turns]


def _answered(recorded: str, sent: str) -> bool:
    """Whether the client's copy `sent` is the recorded answer (then its sources list)."""
    recorded, sent = _normal(recorded), _normal(sent)
    return sent == recorded or (bool(recorded) and sent.startswith(recorded + " "))


def same_turns(recorded: Sequence[Turn], prior: Sequence[PriorTurn]) -> bool:
    """Whether the session's turns are exactly the client's prior transcript."""
    return len(recorded) == len(prior) and all(
        _normal(turn.question) == _normal(question) and _answered(turn.answer, answer)
        for turn, (question, answer) in zip(recorded, prior, strict=True)
    )


class SessionFinder:
    """Derives the session of each `/v1` request of one app, and knows which are busy."""

    def __init__(self) -> None:
        # Held while deriving: two requests sent at once must not both take a new id.
        self._lock = asyncio.Lock()
        # Derived sessions whose run has not ended: their turns are about to change.
        self._busy: set[str] = set()

    async def derive(
        self, chat: ChatService, user: str, question: str, prior: Sequence[PriorTurn]
    ) -> tuple[str, list[PriorTurn], bool]:
        """(the session, the turns to seed it with: none when it is continued, whether
        it is new), claimed for `user`.

        The session is busy until `release`.
        """
        async with self._lock:
            session_id, seed, created = await self._find(chat, user, question, prior)
            self._busy.add(session_id)
        return session_id, seed, created

    async def _find(
        self, chat: ChatService, user: str, question: str, prior: Sequence[PriorTurn]
    ) -> tuple[str, list[PriorTurn], bool]:
        key = conversation_key(user, prior[0][0] if prior else question)
        numbered = [f"oai-{key}-{number}" for number in range(MAX_SAME_START)]
        matches: list[str] = []
        for session_id in numbered if prior else []:
            if session_id in self._busy:
                continue
            info = await chat.store.index.session(session_id)
            if (
                info is not None
                and info.owner == user
                and info.turns == len(prior)
                and same_turns(await chat.store.index.turns(session_id), prior)
            ):
                matches.append(session_id)
        if len(matches) == 1:
            try:
                await chat.claim(matches[0], user)
                return matches[0], [], False
            except SessionNotFoundError:  # deleted and taken by another user meanwhile
                pass
        if len(matches) > 1:
            logger.info("%d sessions hold this transcript: a new one starts", len(matches))
        for session_id in [*numbered, new_session_id()]:
            if session_id in self._busy:
                continue
            try:
                if await chat.claim(session_id, user):
                    return session_id, list(prior), True
            except SessionNotFoundError:
                continue  # another user's
        raise RuntimeError("no free session id")  # pragma: no cover - a fresh uuid is free

    def release(self, session_id: str) -> None:
        self._busy.discard(session_id)

    async def held(
        self, session_id: str, events: AsyncGenerator[ServiceEvent, None]
    ) -> AsyncGenerator[ServiceEvent, None]:
        """`events`, releasing the session once the run has ended (its turn recorded)."""
        try:
            async with contextlib.aclosing(events) as run:
                async for event in run:
                    yield event
        finally:
            self.release(session_id)


async def seed(
    chat: ChatService, session_id: str, turns: Sequence[PriorTurn], mode: str, owner: str
) -> None:
    """Start a new session with the client's prior turns: in the thread, so the model
    remembers them, then in the index (with no sources), so its history shows them."""
    if not turns:
        return
    try:
        # A write to the thread like a turn's: none may run in it meanwhile.
        async with chat.store.locks.hold(session_id):
            await chat.assistant.seed(session_id, turns, mode)
            for question, answer in turns:
                await chat.store.index.record_turn(
                    session_id, question, answer, [], (), mode, owner
                )
    except BaseException:
        # Half a seed would be a session no transcript is; shielded from a cancellation.
        with contextlib.suppress(Exception):
            await asyncio.shield(chat.store.delete(session_id))
        raise
    logger.info("session %s starts with the client's %d earlier turns", session_id, len(turns))
