"""The query router in front of the plan, decided by rules so the common path costs no
model call.

- `simple`: small talk (a greeting, thanks, "who are you?") is answered directly;
  nothing to search, nothing to cite.
- `history_required`: a follow-up that moves the conversation to something new ("what
  about in Rust?", "그럼 Django에서는?") cannot be searched as written; it is rewritten
  into a standalone question from the thread's history, then planned.
- `rag_required`: everything else goes through the pipeline. A follow-up about the last
  answer itself ("show me an example") stays here: analyze_question answers it from the
  conversation without searching.

Trivia is deliberately not `simple`: no rule tells it from a real question, and a cited
answer to it costs a search, never a wrong answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codeweaver.agent.rules.guard import strip_code
from codeweaver.words import new_terms, refers_back

if TYPE_CHECKING:
    from codeweaver.agent.state import Route

_SMALL_TALK_EN = (
    r"(hi|hello|hey|yo|hiya|good (morning|afternoon|evening|night)|"
    r"thanks?( a lot| so much| very much)?( again)?|thank you( so much| very much)?( again)?|"
    r"thx|ty|cheers|great|cool|nice|awesome|perfect|got it|ok(ay)?|bye|goodbye|"
    r"see you|who are you|what are you|what can you do|how are you( doing)?)"
)
_SMALL_TALK_KO = (
    r"(안녕(하세요|하십니까)?|반가워(요)?|고마워(요)?|감사(합니다|해요|드려요)?|땡큐|"
    r"좋아(요)?|알겠(어|습니다|어요)|오케이|잘 ?가|수고(하셨어요|했어)?|"
    r"너는? 누구(야|니|세요)?|누구(야|세요)|뭘 할 수 있어(요)?|뭐 할 수 있어(요)?|ㅎㅇ|ㄱㅅ|ㅇㅋ)"
)
_SMALL_TALK = re.compile(
    rf"^(?:{_SMALL_TALK_EN}|{_SMALL_TALK_KO})(?:[\s,]+(codeweaver|bot|there|buddy))?"
    # One ㅎ or ㅋ per repeat: `(?:ㅎ+)*` splits a run of n in 2^n ways when the match fails.
    r"[\s!.?~^]*(?:[:;]-?[)D]|[😀-🙏👍🙌]|ㅎ|ㅋ|\^\^)*[\s!.?~]*$",
    re.IGNORECASE,
)
_FOLLOW_UP_OPENER = re.compile(
    r"^\s*(what about|how about|and (in|for|with|on)|same (for|in|with)|now (in|for|with)|"
    r"what if|그럼|그러면|근데|그리고)\b|(?:는요|은요|에서는요|라면요?)\s*[?？]?\s*$",
    re.IGNORECASE,
)
MAX_SIMPLE_CHARS = 60


@dataclass(frozen=True)
class RouteDecision:
    route: Route
    reason: str
    new_terms: tuple[str, ...] = ()


def is_small_talk(message: str) -> bool:
    text = message.strip()
    return len(text) <= MAX_SIMPLE_CHARS and "`" not in text and bool(_SMALL_TALK.match(text))


def route_message(message: str, previous_question: str | None) -> RouteDecision:
    """Where a message goes, from its words and the previous question of the thread."""
    if is_small_talk(message):
        return RouteDecision("simple", "small talk")
    if previous_question is None:
        return RouteDecision("rag_required", "a new conversation")
    prose = strip_code(message)
    follows = bool(_FOLLOW_UP_OPENER.search(prose)) or refers_back(prose)
    added = sorted(new_terms(prose, previous_question))
    if follows and added:
        return RouteDecision(
            "history_required", f"a follow-up that adds {', '.join(added)}", tuple(added)
        )
    return RouteDecision("rag_required", "stands alone" if not follows else "about the answer")
